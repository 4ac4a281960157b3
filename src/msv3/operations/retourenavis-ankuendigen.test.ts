import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  returnAnnouncementRequest,
  returnAnnouncementResponse,
} from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import type { ReturnPosition } from './retourenavis.js';
import { type ReturnAnnouncementResponse, retourenavisAnkuendigen } from './retourenavis-ankuendigen.js';

const ID = '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e';
const damaged: ReturnPosition = {
  positionRef: 1,
  deliveryNoteNumber: 'LS2025031800123',
  pzn: '04114918',
  quantity: 1,
  reason: 'Beschaedigt',
};
const expiring: ReturnPosition = {
  positionRef: 2,
  deliveryNoteNumber: 'LS2025031800123',
  pzn: '01234567',
  quantity: 1,
  reason: 'VerfallZuKurz',
  batch: 'CH42',
  expiryDate: '2025-04-30',
};

describe.skipIf(samplesUnavailableReason !== null)('retourenavisAnkuendigen shared samples', () => {
  it('decodes the request sample', () => {
    expect(
      retourenavisAnkuendigen.decodeRequest(readSample('v2/retourenavisAnkuendigen.request.xml')),
    ).toEqual({
      kind: 'ok',
      value: {
        version: 2,
        request: {
          clientSoftwareId: 'ExampleWawi 1.4.2',
          announcement: { id: ID, supportId: 816, positions: [damaged, expiring] },
        },
      },
    });
  });

  it('decodes the response sample split into an accepted and a refused portion', () => {
    expect(
      retourenavisAnkuendigen.decodeResponse(readSample('v2/retourenavisAnkuendigen.response.xml')),
    ).toEqual({
      kind: 'ok',
      value: {
        answer: {
          id: ID,
          supportId: 816,
          portions: [
            {
              verdict: 'RetoureAkzeptiert',
              wholesalerReference: 'RET-000987',
              documentId: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
              pickupTime: '2025-03-19T14:30:00+01:00',
              tour: 'Mittagstour',
              positions: [damaged],
            },
            { verdict: 'RueckgabefristUeberschritten', positions: [expiring] },
          ],
        },
      },
    });
  });
});

describe('retourenavisAnkuendigen round trips (v2)', () => {
  it('decodes every encoded request to the same model, company details included', () => {
    fc.assert(
      fc.property(returnAnnouncementRequest, (request) => {
        expect(
          retourenavisAnkuendigen.decodeRequest(retourenavisAnkuendigen.encodeRequest(2, request)),
        ).toEqual({
          kind: 'ok',
          value: { version: 2, request },
        });
      }),
    );
  });

  it('decodes every encoded response to the same model', () => {
    fc.assert(
      fc.property(returnAnnouncementResponse, (response) => {
        const xml = retourenavisAnkuendigen.encodeResponse(2, response);
        expect(retourenavisAnkuendigen.decodeResponse(xml, 2)).toEqual({ kind: 'ok', value: response });
      }),
    );
  });
});

const fifteenPortions: ReturnAnnouncementResponse = {
  answer: {
    id: ID,
    supportId: 816,
    portions: Array.from({ length: 15 }, () => ({
      verdict: 'KeineRuecknahme' as const,
      positions: [damaged],
    })),
  },
};
const withPortions = (n: number): ReturnAnnouncementResponse => ({
  answer: {
    ...fifteenPortions.answer!,
    portions: Array.from({ length: n }, () => fifteenPortions.answer!.portions[0]!),
  },
});

describe.skipIf(xsdUnavailableReason !== null)('retourenavisAnkuendigen against the original XSD', () => {
  it('accepts 150 generated requests and responses and 15 portions, refuses broken ones', async () => {
    const requests = fc
      .sample(returnAnnouncementRequest, 150)
      .map((r) => retourenavisAnkuendigen.encodeRequest(2, r));
    const responses = fc
      .sample(returnAnnouncementResponse, 150)
      .map((r) => retourenavisAnkuendigen.encodeResponse(2, r));
    const broken = [
      retourenavisAnkuendigen.encodeResponse(2, withPortions(16)),
      retourenavisAnkuendigen.encodeResponse(2, withPortions(0)),
      retourenavisAnkuendigen.encodeRequest(2, {
        announcement: { id: ID, supportId: 1, positions: [damaged], iban: 'I'.repeat(101) },
      }),
    ];
    await expectSchemaVerdicts(
      2,
      [...requests, ...responses, retourenavisAnkuendigen.encodeResponse(2, fifteenPortions)],
      broken,
    );
  });
});

describe('retourenavisAnkuendigen decoders refuse what the schema refuses', () => {
  const answer = retourenavisAnkuendigen.encodeResponse(2, {
    answer: {
      id: ID,
      supportId: 816,
      portions: [
        {
          verdict: 'RetoureAkzeptiert',
          wholesalerReference: 'RET-1',
          documentId: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
          pickupTime: '2025-03-19T14:30:00Z',
          tour: 'T',
          positions: [damaged],
        },
      ],
    },
  });
  const decode = (s: string) => retourenavisAnkuendigen.decodeResponse(s);
  const at = 'return/RetourenAnteil[1]/';

  it('refuses more than 15 portions or none', () => {
    expect(decode(retourenavisAnkuendigen.encodeResponse(2, fifteenPortions)).kind).toBe('ok');
    expectInvalid(
      decode(retourenavisAnkuendigen.encodeResponse(2, withPortions(16))),
      'return/RetourenAnteil: 16 elements, at most 15',
    );
    expectInvalid(
      decode(retourenavisAnkuendigen.encodeResponse(2, withPortions(0))),
      'return/RetourenAnteil: missing required element',
    );
  });

  it('refuses bad portion attributes', () => {
    expectInvalid(decode(answer.replace('RET-1', 'RET 1')), `${at}@GHReferenzID`);
    expectInvalid(decode(answer.replace('RET-1', 'R'.repeat(31))), `${at}@GHReferenzID`);
    expectInvalid(decode(answer.replace('DokumentID="3c4d5e6f', 'DokumentID="3c4d5e6')), `${at}@DokumentID`);
    expectInvalid(decode(answer.replace('2025-03-19T14:30:00Z', '2025-03-19')), `${at}@Abholzeitpunkt`);
    expectInvalid(decode(answer.replace('Tour="T"', 'Tour=""')), `${at}@Tour: length 0`);
    expectInvalid(
      decode(answer.replace(' RetourenAnteilTyp="RetoureAkzeptiert"', '')),
      `${at}@RetourenAnteilTyp: missing`,
    );
    expectInvalid(
      decode(
        answer.replace(
          'Retouregrund="Beschaedigt"',
          'Retouregrund="Beschaedigt" RetourenAnteilTyp="RetoureAkzeptiert"',
        ),
      ),
      `${at}Position[1]/@RetourenAnteilTyp: attribute not allowed`,
    );
  });

  it('refuses company details longer than 100 characters', () => {
    const request = retourenavisAnkuendigen.encodeRequest(2, {
      announcement: { id: ID, supportId: 1, positions: [damaged], iban: 'DE00', bic: '' },
    });
    expect(retourenavisAnkuendigen.decodeRequest(request).kind).toBe('ok');
    expectInvalid(
      retourenavisAnkuendigen.decodeRequest(request.replace('IBAN="DE00"', `IBAN="${'D'.repeat(101)}"`)),
      'retourenavisAnkuendigungType/@IBAN: length 101',
    );
    expectInvalid(
      retourenavisAnkuendigen.decodeRequest(request.replace('IBAN="DE00"', 'IBAN="DE00" Telefon="1"')),
      'retourenavisAnkuendigungType/@Telefon: attribute not allowed',
    );
  });

  it('accepts an empty request and an empty answer, both optional in the schema', () => {
    expect(retourenavisAnkuendigen.decodeRequest(soapEnvelope('<m:retourenavisAnkuendigen/>')).kind).toBe(
      'ok',
    );
    expect(decode(soapEnvelope('<m:retourenavisAnkuendigenResponse/>'))).toEqual({ kind: 'ok', value: {} });
    expectInvalid(
      decode(
        soapEnvelope(
          '<m:retourenavisAnkuendigenResponse><return/><return/></m:retourenavisAnkuendigenResponse>',
        ),
      ),
      'return: unexpected element',
    );
  });
});
