import { describe, expect, it } from 'vitest';
import {
  deliveryNoticeHistoryRequest,
  deliveryNoticesResponse,
} from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  expectRefusedInputs,
  expectRefusedVariations,
  readSample,
  soapEnvelope,
  V1,
} from '../test-support/codec-test-kit.js';
import { lieferavisAbfrageHist } from './lieferavis-abfrage-hist.js';

describeSamples(lieferavisAbfrageHist, {
  'decodes the request sample (by delivery-note number only)': {
    request: 'v2/lieferavisAbfrageHist.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2', deliveryNoteNumber: 'LS2025031800123' },
  },
  'turns the unknown-delivery-note fault into a typed fault': {
    response: 'v2/fault.lieferscheinUnbekannt.xml',
    outcome: {
      kind: 'fault',
      fault: {
        kind: 'LieferscheinOderBarcodeUnbekanntFault',
        soapCode: 'Sender',
        reason: 'Lieferschein oder Barcode unbekannt',
        errorCode: 'L404',
        userText: 'Der Lieferschein ist nicht bekannt.',
        technicalText: 'no delivery note LS2025031800999',
      },
    },
  },
  'decodes the notice sample as a history answer too (same answer type)': () => {
    const xml = readSample('v2/lieferavisAbfrageNeu.response.xml').replaceAll(
      'lieferavisAbfrageNeuResponse',
      'lieferavisAbfrageHistResponse',
    );
    const decoded = lieferavisAbfrageHist.decodeResponse(xml);
    expect(decoded.kind).toBe('ok');
    if (decoded.kind === 'ok')
      expect(decoded.value.notices.map((n) => n.deliveryNoteNumber)).toEqual(['LS2025031800123']);
  },
});

describeRoundTrips(lieferavisAbfrageHist, {
  request: deliveryNoticeHistoryRequest,
  response: deliveryNoticesResponse,
});

describeXsdValidity(lieferavisAbfrageHist, {
  title: 'accepts 150 generated requests and responses, refuses bad keys',
  request: deliveryNoticeHistoryRequest,
  response: deliveryNoticesResponse,
  cases: () => ({
    invalid: [
      lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: 'a', deliveryNoteNumber: 'LS 1' }),
      lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: 'a', barcodeReference: '12345' }),
      lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: 'a', deliveryNoteNumber: 'L'.repeat(31) }),
    ],
  }),
});

describe('lieferavisAbfrageHist decoders refuse what the schema refuses', () => {
  const request = (attributes: string, ns?: string) =>
    soapEnvelope(
      `<m:lieferavisAbfrageHist><clientSoftwareKennung>a</clientSoftwareKennung><lieferavisAbfrageHistAbfrage${attributes}/></m:lieferavisAbfrageHist>`,
      ns,
    );
  const decode = (xml: string) => lieferavisAbfrageHist.decodeRequest(xml);

  it('accepts either key, both or none (the schema makes both optional)', () => {
    expect(decode(request(' BarcodeReferenz="12?a*b"')).kind).toBe('ok');
    expect(decode(request(' Lieferscheinnummer="a#+*/-_" BarcodeReferenz="#"')).kind).toBe('ok');
    expect(decode(request('')).kind).toBe('ok');
  });

  it('refuses keys that break LieferscheinnummerType or BarcodeReferenzType', () => {
    expectRefusedInputs(decode, request, [
      [' Lieferscheinnummer=""', 'lieferavisAbfrageHistAbfrage/@Lieferscheinnummer'],
      [' Lieferscheinnummer="LS?1"', '@Lieferscheinnummer'],
      [` Lieferscheinnummer="${'L'.repeat(31)}"`, '@Lieferscheinnummer'],
      [' BarcodeReferenz="12345"', 'lieferavisAbfrageHistAbfrage/@BarcodeReferenz'],
      [' BarcodeReferenz="12a#"', '@BarcodeReferenz'],
      [` BarcodeReferenz="#${'a'.repeat(30)}"`, '@BarcodeReferenz'],
    ]);
  });

  it('refuses v1, a missing query element, unknown attributes and content', () => {
    expectInvalid(decode(request('', V1)), 'not part of MSV3 v1');
    expectRefusedVariations(decode, request(''), [
      ['<lieferavisAbfrageHistAbfrage/>', '', 'lieferavisAbfrageHistAbfrage: missing required element'],
      [
        '<lieferavisAbfrageHistAbfrage/>',
        '<lieferavisAbfrageHistAbfrage Datum="2025-01-01"/>',
        'lieferavisAbfrageHistAbfrage/@Datum: attribute not allowed',
      ],
      [
        '<lieferavisAbfrageHistAbfrage/>',
        '<lieferavisAbfrageHistAbfrage>x</lieferavisAbfrageHistAbfrage>',
        'lieferavisAbfrageHistAbfrage/text(): character content is not allowed',
      ],
      [
        '<clientSoftwareKennung>a</clientSoftwareKennung>',
        '',
        'clientSoftwareKennung: missing required element',
      ],
    ]);
  });
});
