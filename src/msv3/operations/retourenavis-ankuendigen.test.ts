import { describe, expect, it } from 'vitest';
import {
  returnAnnouncementRequest,
  returnAnnouncementResponse,
} from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  expectRefusedVariations,
  soapEnvelope,
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

describeSamples(retourenavisAnkuendigen, {
  'decodes the request sample': {
    request: 'v2/retourenavisAnkuendigen.request.xml',
    decodesTo: {
      clientSoftwareId: 'ExampleWawi 1.4.2',
      announcement: { id: ID, supportId: 816, positions: [damaged, expiring] },
    },
  },
  'decodes the response sample split into an accepted and a refused portion': {
    response: 'v2/retourenavisAnkuendigen.response.xml',
    decodesTo: {
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
  },
});

describeRoundTrips(retourenavisAnkuendigen, {
  request: returnAnnouncementRequest,
  response: returnAnnouncementResponse,
  titles: { request: 'decodes every encoded request to the same model, company details included' },
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

describeXsdValidity(retourenavisAnkuendigen, {
  title: 'accepts 150 generated requests and responses and 15 portions, refuses broken ones',
  request: returnAnnouncementRequest,
  response: returnAnnouncementResponse,
  cases: () => ({
    valid: [retourenavisAnkuendigen.encodeResponse(2, fifteenPortions)],
    invalid: [
      retourenavisAnkuendigen.encodeResponse(2, withPortions(16)),
      retourenavisAnkuendigen.encodeResponse(2, withPortions(0)),
      retourenavisAnkuendigen.encodeRequest(2, {
        announcement: { id: ID, supportId: 1, positions: [damaged], iban: 'I'.repeat(101) },
      }),
    ],
  }),
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
    expectRefusedVariations(decode, answer, [
      ['RET-1', 'RET 1', `${at}@GHReferenzID`],
      ['RET-1', 'R'.repeat(31), `${at}@GHReferenzID`],
      ['DokumentID="3c4d5e6f', 'DokumentID="3c4d5e6', `${at}@DokumentID`],
      ['2025-03-19T14:30:00Z', '2025-03-19', `${at}@Abholzeitpunkt`],
      ['Tour="T"', 'Tour=""', `${at}@Tour: length 0`],
      [' RetourenAnteilTyp="RetoureAkzeptiert"', '', `${at}@RetourenAnteilTyp: missing`],
      [
        'Retouregrund="Beschaedigt"',
        'Retouregrund="Beschaedigt" RetourenAnteilTyp="RetoureAkzeptiert"',
        `${at}Position[1]/@RetourenAnteilTyp: attribute not allowed`,
      ],
    ]);
  });

  it('refuses company details longer than 100 characters', () => {
    const request = retourenavisAnkuendigen.encodeRequest(2, {
      announcement: { id: ID, supportId: 1, positions: [damaged], iban: 'DE00', bic: '' },
    });
    expect(retourenavisAnkuendigen.decodeRequest(request).kind).toBe('ok');
    expectRefusedVariations((xml) => retourenavisAnkuendigen.decodeRequest(xml), request, [
      ['IBAN="DE00"', `IBAN="${'D'.repeat(101)}"`, 'retourenavisAnkuendigungType/@IBAN: length 101'],
      [
        'IBAN="DE00"',
        'IBAN="DE00" Telefon="1"',
        'retourenavisAnkuendigungType/@Telefon: attribute not allowed',
      ],
    ]);
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
