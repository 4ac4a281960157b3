import { describe, expect, it } from 'vitest';
import { returnEnquiryRequest, returnEnquiryResponse } from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectRefusedVariations,
  soapEnvelope,
  V1,
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

describeSamples(retourenavisAnfragen, {
  'decodes the request sample': {
    request: 'v2/retourenavisAnfragen.request.xml',
    decodesTo: {
      clientSoftwareId: 'ExampleWawi 1.4.2',
      enquiry: { id: ID, supportId: 815, positions: [damaged, tooMany] },
    },
  },
  'decodes the response sample with a verdict per position': {
    response: 'v2/retourenavisAnfragen.response.xml',
    decodesTo: {
      answer: {
        id: ID,
        supportId: 815,
        positions: [
          { ...damaged, verdict: 'RetoureAkzeptiert' },
          { ...tooMany, verdict: 'MengeUeberschritten' },
        ],
      },
    },
  },
});

describeRoundTrips(retourenavisAnfragen, {
  request: returnEnquiryRequest,
  response: returnEnquiryResponse,
  titles: {
    request: 'decodes every encoded request to the same model, with or without the optional parts',
    response: 'decodes every encoded response to the same model, with or without the optional return',
  },
});

const largest: ReturnEnquiryRequest = {
  enquiry: {
    id: ID,
    supportId: 999_999,
    positions: Array.from({ length: 999 }, (_, k) => ({ ...damaged, positionRef: k + 1, quantity: 9999 })),
  },
};

describeXsdValidity(retourenavisAnfragen, {
  title: 'accepts 150 generated requests and responses and 999 positions, refuses broken ones',
  request: returnEnquiryRequest,
  response: returnEnquiryResponse,
  cases: () => {
    const fixed = retourenavisAnfragen.encodeRequest(2, {
      enquiry: { id: ID, supportId: 1, positions: [damaged] },
    });
    return {
      valid: [retourenavisAnfragen.encodeRequest(2, largest)],
      invalid: [
        fixed.replace('PosRefID="1"', 'PosRefID="1000"'),
        fixed.replace('RetourenMenge="1"', 'RetourenMenge="10000"'),
        fixed.replace('Retouregrund="Beschaedigt"', 'Retouregrund="Kaputt"'),
        retourenavisAnfragen.encodeRequest(2, {
          enquiry: { ...largest.enquiry!, positions: [...largest.enquiry!.positions, damaged] },
        }),
      ],
    };
  },
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
    expectRefusedVariations(decode, xml, [
      ['PosRefID="1"', 'PosRefID="0"', `${at}@PosRefID: 0 is outside 1..999`],
      ['PosRefID="1"', 'PosRefID="1000"', `${at}@PosRefID`],
      ['RetourenMenge="1"', 'RetourenMenge="10000"', `${at}@RetourenMenge: 10000 is outside 1..9999`],
      ['Retouregrund="Beschaedigt"', 'Retouregrund="Kaputt"', `${at}@Retouregrund`],
      ['Lieferscheinnummer="LS2025031800123"', 'Lieferscheinnummer="LS.1"', `${at}@Lieferscheinnummer`],
      ['PZN="4114918"', 'PZN="PZN4114918"', `${at}@PZN`],
      ['Charge="CH1"', `Charge="${'C'.repeat(51)}"`, `${at}@Charge: length 51`],
      ['2025-04-30', '2025-4-30', `${at}@Verfalldatum`],
      [' Retouregrund="Beschaedigt"', '', `${at}@Retouregrund: missing required attribute`],
      [
        'Retouregrund="Beschaedigt"',
        'Retouregrund="Beschaedigt" RetourenAnteilTyp="RetoureAkzeptiert"',
        `${at}@RetourenAnteilTyp: attribute not allowed`,
      ],
    ]);
  });

  it('refuses a bad header, no positions, wrong order and v1', () => {
    expectRefusedVariations(decode, xml, [
      ['RetoureSupportID="815"', 'RetoureSupportID="1000000"', 'retourenavisAnfrageType/@RetoureSupportID'],
      [`ID="${ID}"`, 'ID="1"', 'retourenavisAnfrageType/@ID'],
      [/<m:Position [^>]*\/>/, '', 'retourenavisAnfrageType/Position: missing required element'],
      [
        /(<clientSoftwareKennung>.*<\/clientSoftwareKennung>)(<retourenavisAnfrageType.*<\/retourenavisAnfrageType>)/,
        '$2$1',
        'clientSoftwareKennung: unexpected element',
      ],
      ['urn:msv3:v2', V1, 'not part of MSV3 v1'],
    ]);
  });

  it('refuses an answer position without its verdict', () => {
    const answer = retourenavisAnfragen.encodeResponse(2, {
      answer: { id: ID, supportId: 815, positions: [{ ...damaged, verdict: 'KeineRuecknahme' }] },
    });
    expectRefusedVariations((s) => retourenavisAnfragen.decodeResponse(s), answer, [
      [
        ' RetourenAnteilTyp="KeineRuecknahme"',
        '',
        'return/Position[1]/@RetourenAnteilTyp: missing required attribute',
      ],
      ['KeineRuecknahme', 'Abgelehnt', "return/Position[1]/@RetourenAnteilTyp: 'Abgelehnt' is not one of"],
    ]);
    expect(retourenavisAnfragen.decodeResponse(soapEnvelope('<m:retourenavisAnfragenResponse/>'))).toEqual({
      kind: 'ok',
      value: {},
    });
  });
});
