import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { returnEnquiryRequest, returnEnquiryResponse } from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  V1,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import type { ReturnPosition } from './retourenavis.js';
import { type ReturnEnquiryRequest, retourenavisAnfragen } from './retourenavis-anfragen.js';

const ID = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
const damaged: ReturnPosition = {
  positionRef: 1,
  deliveryNoteNumber: 'LS2025031800123',
  pzn: '04114918',
  quantity: 1,
  reason: 'Beschaedigt',
};
const tooMany: ReturnPosition = {
  ...damaged,
  positionRef: 2,
  pzn: '01234567',
  quantity: 2,
  reason: 'ZuvielGeliefert',
};

describe.skipIf(samplesUnavailableReason !== null)('retourenavisAnfragen shared samples', () => {
  it('decodes the request sample', () => {
    expect(retourenavisAnfragen.decodeRequest(readSample('v2/retourenavisAnfragen.request.xml'))).toEqual({
      kind: 'ok',
      value: {
        version: 2,
        request: {
          clientSoftwareId: 'ExampleWawi 1.4.2',
          enquiry: { id: ID, supportId: 815, positions: [damaged, tooMany] },
        },
      },
    });
  });

  it('decodes the response sample with a verdict per position', () => {
    expect(retourenavisAnfragen.decodeResponse(readSample('v2/retourenavisAnfragen.response.xml'))).toEqual({
      kind: 'ok',
      value: {
        answer: {
          id: ID,
          supportId: 815,
          positions: [
            { ...damaged, verdict: 'RetoureAkzeptiert' },
            { ...tooMany, verdict: 'MengeUeberschritten' },
          ],
        },
      },
    });
  });
});

describe('retourenavisAnfragen round trips (v2)', () => {
  it('decodes every encoded request to the same model, with or without the optional parts', () => {
    fc.assert(
      fc.property(returnEnquiryRequest, (request) => {
        expect(retourenavisAnfragen.decodeRequest(retourenavisAnfragen.encodeRequest(2, request))).toEqual({
          kind: 'ok',
          value: { version: 2, request },
        });
      }),
    );
  });

  it('decodes every encoded response to the same model, with or without the optional return', () => {
    fc.assert(
      fc.property(returnEnquiryResponse, (response) => {
        const xml = retourenavisAnfragen.encodeResponse(2, response);
        expect(retourenavisAnfragen.decodeResponse(xml, 2)).toEqual({ kind: 'ok', value: response });
      }),
    );
  });
});

const largest: ReturnEnquiryRequest = {
  enquiry: {
    id: ID,
    supportId: 999_999,
    positions: Array.from({ length: 999 }, (_, k) => ({ ...damaged, positionRef: k + 1, quantity: 9999 })),
  },
};

describe.skipIf(xsdUnavailableReason !== null)('retourenavisAnfragen against the original XSD', () => {
  it('accepts 150 generated requests and responses and 999 positions, refuses broken ones', async () => {
    const requests = fc
      .sample(returnEnquiryRequest, 150)
      .map((r) => retourenavisAnfragen.encodeRequest(2, r));
    const responses = fc
      .sample(returnEnquiryResponse, 150)
      .map((r) => retourenavisAnfragen.encodeResponse(2, r));
    const fixed = retourenavisAnfragen.encodeRequest(2, {
      enquiry: { id: ID, supportId: 1, positions: [damaged] },
    });
    const broken = [
      fixed.replace('PosRefID="1"', 'PosRefID="1000"'),
      fixed.replace('RetourenMenge="1"', 'RetourenMenge="10000"'),
      fixed.replace('Retouregrund="Beschaedigt"', 'Retouregrund="Kaputt"'),
      retourenavisAnfragen.encodeRequest(2, {
        enquiry: { ...largest.enquiry!, positions: [...largest.enquiry!.positions, damaged] },
      }),
    ];
    await expectSchemaVerdicts(
      2,
      [...requests, ...responses, retourenavisAnfragen.encodeRequest(2, largest)],
      broken,
    );
  });
});

describe('retourenavisAnfragen decoders refuse what the schema refuses', () => {
  const xml = retourenavisAnfragen.encodeRequest(2, {
    clientSoftwareId: 'Wawi',
    enquiry: { id: ID, supportId: 815, positions: [{ ...damaged, batch: 'CH1', expiryDate: '2025-04-30' }] },
  });
  const decode = (s: string) => retourenavisAnfragen.decodeRequest(s);

  it('accepts a request without any of its optional children', () => {
    expect(decode(soapEnvelope('<m:retourenavisAnfragen/>'))).toEqual({
      kind: 'ok',
      value: { version: 2, request: {} },
    });
  });

  it('refuses position attributes outside their ranges, enums and patterns', () => {
    const at = 'retourenavisAnfrageType/Position[1]/';
    expectInvalid(decode(xml.replace('PosRefID="1"', 'PosRefID="0"')), `${at}@PosRefID: 0 is outside 1..999`);
    expectInvalid(decode(xml.replace('PosRefID="1"', 'PosRefID="1000"')), `${at}@PosRefID`);
    expectInvalid(
      decode(xml.replace('RetourenMenge="1"', 'RetourenMenge="10000"')),
      `${at}@RetourenMenge: 10000 is outside 1..9999`,
    );
    expectInvalid(
      decode(xml.replace('Retouregrund="Beschaedigt"', 'Retouregrund="Kaputt"')),
      `${at}@Retouregrund`,
    );
    expectInvalid(
      decode(xml.replace('Lieferscheinnummer="LS2025031800123"', 'Lieferscheinnummer="LS.1"')),
      `${at}@Lieferscheinnummer`,
    );
    expectInvalid(decode(xml.replace('PZN="4114918"', 'PZN="PZN4114918"')), `${at}@PZN`);
    expectInvalid(
      decode(xml.replace('Charge="CH1"', `Charge="${'C'.repeat(51)}"`)),
      `${at}@Charge: length 51`,
    );
    expectInvalid(decode(xml.replace('2025-04-30', '2025-4-30')), `${at}@Verfalldatum`);
    expectInvalid(
      decode(xml.replace(' Retouregrund="Beschaedigt"', '')),
      `${at}@Retouregrund: missing required attribute`,
    );
    expectInvalid(
      decode(
        xml.replace(
          'Retouregrund="Beschaedigt"',
          'Retouregrund="Beschaedigt" RetourenAnteilTyp="RetoureAkzeptiert"',
        ),
      ),
      `${at}@RetourenAnteilTyp: attribute not allowed`,
    );
  });

  it('refuses a bad header, no positions, wrong order and v1', () => {
    expectInvalid(
      decode(xml.replace('RetoureSupportID="815"', 'RetoureSupportID="1000000"')),
      'retourenavisAnfrageType/@RetoureSupportID',
    );
    expectInvalid(decode(xml.replace(`ID="${ID}"`, 'ID="1"')), 'retourenavisAnfrageType/@ID');
    expectInvalid(
      decode(xml.replace(/<m:Position [^>]*\/>/, '')),
      'retourenavisAnfrageType/Position: missing required element',
    );
    const swapped = xml.replace(
      /(<clientSoftwareKennung>.*<\/clientSoftwareKennung>)(<retourenavisAnfrageType.*<\/retourenavisAnfrageType>)/,
      '$2$1',
    );
    expectInvalid(decode(swapped), 'clientSoftwareKennung: unexpected element');
    expectInvalid(decode(xml.replace('urn:msv3:v2', V1)), 'not part of MSV3 v1');
  });

  it('refuses an answer position without its verdict', () => {
    const answer = retourenavisAnfragen.encodeResponse(2, {
      answer: { id: ID, supportId: 815, positions: [{ ...damaged, verdict: 'KeineRuecknahme' }] },
    });
    expectInvalid(
      retourenavisAnfragen.decodeResponse(answer.replace(' RetourenAnteilTyp="KeineRuecknahme"', '')),
      'return/Position[1]/@RetourenAnteilTyp: missing required attribute',
    );
    expectInvalid(
      retourenavisAnfragen.decodeResponse(answer.replace('KeineRuecknahme', 'Abgelehnt')),
      "return/Position[1]/@RetourenAnteilTyp: 'Abgelehnt' is not one of",
    );
    expect(retourenavisAnfragen.decodeResponse(soapEnvelope('<m:retourenavisAnfragenResponse/>'))).toEqual({
      kind: 'ok',
      value: {},
    });
  });
});
