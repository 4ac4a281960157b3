import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  deliveryNoticeHistoryRequest,
  deliveryNoticesResponse,
} from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  V1,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import { lieferavisAbfrageHist } from './lieferavis-abfrage-hist.js';

describe.skipIf(samplesUnavailableReason !== null)('lieferavisAbfrageHist shared samples', () => {
  it('decodes the request sample (by delivery-note number only)', () => {
    expect(lieferavisAbfrageHist.decodeRequest(readSample('v2/lieferavisAbfrageHist.request.xml'))).toEqual({
      kind: 'ok',
      value: {
        version: 2,
        request: { clientSoftwareId: 'ExampleWawi 1.4.2', deliveryNoteNumber: 'LS2025031800123' },
      },
    });
  });

  it('turns the unknown-delivery-note fault into a typed fault', () => {
    expect(lieferavisAbfrageHist.decodeResponse(readSample('v2/fault.lieferscheinUnbekannt.xml'))).toEqual({
      kind: 'fault',
      fault: {
        kind: 'LieferscheinOderBarcodeUnbekanntFault',
        soapCode: 'Sender',
        reason: 'Lieferschein oder Barcode unbekannt',
        errorCode: 'L404',
        userText: 'Der Lieferschein ist nicht bekannt.',
        technicalText: 'no delivery note LS2025031800999',
      },
    });
  });

  it('decodes the notice sample as a history answer too (same answer type)', () => {
    const xml = readSample('v2/lieferavisAbfrageNeu.response.xml').replaceAll(
      'lieferavisAbfrageNeuResponse',
      'lieferavisAbfrageHistResponse',
    );
    const decoded = lieferavisAbfrageHist.decodeResponse(xml);
    expect(decoded.kind).toBe('ok');
    if (decoded.kind === 'ok')
      expect(decoded.value.notices.map((n) => n.deliveryNoteNumber)).toEqual(['LS2025031800123']);
  });
});

describe('lieferavisAbfrageHist round trips (v2)', () => {
  it('decodes every encoded request to the same model', () => {
    fc.assert(
      fc.property(deliveryNoticeHistoryRequest, (request) => {
        expect(lieferavisAbfrageHist.decodeRequest(lieferavisAbfrageHist.encodeRequest(2, request))).toEqual({
          kind: 'ok',
          value: { version: 2, request },
        });
      }),
    );
  });

  it('decodes every encoded response to the same model', () => {
    fc.assert(
      fc.property(deliveryNoticesResponse, (response) => {
        const xml = lieferavisAbfrageHist.encodeResponse(2, response);
        expect(lieferavisAbfrageHist.decodeResponse(xml, 2)).toEqual({ kind: 'ok', value: response });
      }),
    );
  });
});

describe.skipIf(xsdUnavailableReason !== null)('lieferavisAbfrageHist against the original XSD', () => {
  it('accepts 150 generated requests and responses, refuses bad keys', async () => {
    const requests = fc
      .sample(deliveryNoticeHistoryRequest, 150)
      .map((r) => lieferavisAbfrageHist.encodeRequest(2, r));
    const responses = fc
      .sample(deliveryNoticesResponse, 150)
      .map((r) => lieferavisAbfrageHist.encodeResponse(2, r));
    const broken = [
      lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: 'a', deliveryNoteNumber: 'LS 1' }),
      lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: 'a', barcodeReference: '12345' }),
      lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: 'a', deliveryNoteNumber: 'L'.repeat(31) }),
    ];
    await expectSchemaVerdicts(2, [...requests, ...responses], broken);
  });
});

describe('lieferavisAbfrageHist decoders refuse what the schema refuses', () => {
  const request = (attributes: string, ns?: string) =>
    soapEnvelope(
      `<m:lieferavisAbfrageHist><clientSoftwareKennung>a</clientSoftwareKennung><lieferavisAbfrageHistAbfrage${attributes}/></m:lieferavisAbfrageHist>`,
      ns,
    );

  it('accepts either key, both or none (the schema makes both optional)', () => {
    expect(lieferavisAbfrageHist.decodeRequest(request(' BarcodeReferenz="12?a*b"')).kind).toBe('ok');
    expect(
      lieferavisAbfrageHist.decodeRequest(request(' Lieferscheinnummer="a#+*/-_" BarcodeReferenz="#"')).kind,
    ).toBe('ok');
    expect(lieferavisAbfrageHist.decodeRequest(request('')).kind).toBe('ok');
  });

  it('refuses keys that break LieferscheinnummerType or BarcodeReferenzType', () => {
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(request(' Lieferscheinnummer=""')),
      'lieferavisAbfrageHistAbfrage/@Lieferscheinnummer',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(request(' Lieferscheinnummer="LS?1"')),
      '@Lieferscheinnummer',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(request(` Lieferscheinnummer="${'L'.repeat(31)}"`)),
      '@Lieferscheinnummer',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(request(' BarcodeReferenz="12345"')),
      'lieferavisAbfrageHistAbfrage/@BarcodeReferenz',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(request(' BarcodeReferenz="12a#"')),
      '@BarcodeReferenz',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(request(` BarcodeReferenz="#${'a'.repeat(30)}"`)),
      '@BarcodeReferenz',
    );
  });

  it('refuses v1, a missing query element, unknown attributes and content', () => {
    expectInvalid(lieferavisAbfrageHist.decodeRequest(request('', V1)), 'not part of MSV3 v1');
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(
        soapEnvelope(
          '<m:lieferavisAbfrageHist><clientSoftwareKennung>a</clientSoftwareKennung></m:lieferavisAbfrageHist>',
        ),
      ),
      'lieferavisAbfrageHistAbfrage: missing required element',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(request(' Datum="2025-01-01"')),
      'lieferavisAbfrageHistAbfrage/@Datum: attribute not allowed',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(
        request('').replace(
          '<lieferavisAbfrageHistAbfrage/>',
          '<lieferavisAbfrageHistAbfrage>x</lieferavisAbfrageHistAbfrage>',
        ),
      ),
      'lieferavisAbfrageHistAbfrage/text(): character content is not allowed',
    );
    expectInvalid(
      lieferavisAbfrageHist.decodeRequest(
        request('').replace('<clientSoftwareKennung>a</clientSoftwareKennung>', ''),
      ),
      'clientSoftwareKennung: missing required element',
    );
  });
});
