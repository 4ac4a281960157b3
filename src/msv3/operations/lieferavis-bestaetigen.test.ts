import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { confirmDeliveryNoticesRequest } from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  V1,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import { lieferavisBestaetigen } from './lieferavis-bestaetigen.js';

describe.skipIf(samplesUnavailableReason !== null)('lieferavisBestaetigen shared samples', () => {
  it('decodes the request sample', () => {
    expect(lieferavisBestaetigen.decodeRequest(readSample('v2/lieferavisBestaetigen.request.xml'))).toEqual({
      kind: 'ok',
      value: {
        version: 2,
        request: { clientSoftwareId: 'ExampleWawi 1.4.2', deliveryNoteNumbers: ['LS2025031800123'] },
      },
    });
  });

  it('decodes the empty response sample', () => {
    expect(lieferavisBestaetigen.decodeResponse(readSample('v2/lieferavisBestaetigen.response.xml'))).toEqual(
      {
        kind: 'ok',
        value: {},
      },
    );
  });
});

describe('lieferavisBestaetigen round trips (v2)', () => {
  it('decodes every encoded request to the same model', () => {
    fc.assert(
      fc.property(confirmDeliveryNoticesRequest, (request) => {
        expect(lieferavisBestaetigen.decodeRequest(lieferavisBestaetigen.encodeRequest(2, request))).toEqual({
          kind: 'ok',
          value: { version: 2, request },
        });
      }),
    );
  });

  it('decodes the encoded empty response', () => {
    expect(lieferavisBestaetigen.decodeResponse(lieferavisBestaetigen.encodeResponse(2, {}), 2)).toEqual({
      kind: 'ok',
      value: {},
    });
  });
});

const numbers = (n: number) => Array.from({ length: n }, (_, k) => `LS${k}`);

describe.skipIf(xsdUnavailableReason !== null)('lieferavisBestaetigen against the original XSD', () => {
  it('accepts 150 generated requests, 999 numbers and the response; refuses 1000 or a bad number', async () => {
    const requests = fc
      .sample(confirmDeliveryNoticesRequest, 150)
      .map((r) => lieferavisBestaetigen.encodeRequest(2, r));
    const largest = lieferavisBestaetigen.encodeRequest(2, {
      clientSoftwareId: '',
      deliveryNoteNumbers: numbers(999),
    });
    const broken = [
      lieferavisBestaetigen.encodeRequest(2, { clientSoftwareId: '', deliveryNoteNumbers: numbers(1000) }),
      lieferavisBestaetigen.encodeRequest(2, { clientSoftwareId: '', deliveryNoteNumbers: ['LS 1'] }),
      lieferavisBestaetigen.encodeRequest(2, { clientSoftwareId: '', deliveryNoteNumbers: [] }),
    ];
    await expectSchemaVerdicts(
      2,
      [...requests, largest, lieferavisBestaetigen.encodeResponse(2, {})],
      broken,
    );
  });
});

describe('lieferavisBestaetigen decoders refuse what the schema refuses', () => {
  const decode = (numbersXml: string, ns?: string) =>
    lieferavisBestaetigen.decodeRequest(
      soapEnvelope(
        `<m:lieferavisBestaetigen><clientSoftwareKennung>a</clientSoftwareKennung><lieferavisBestaetigenType>${numbersXml}</lieferavisBestaetigenType></m:lieferavisBestaetigen>`,
        ns,
      ),
    );

  it('refuses an empty list, more than 999 numbers and bad numbers', () => {
    expectInvalid(decode(''), 'lieferavisBestaetigenType/Lieferscheinnummer: missing required element');
    const many = numbers(1000)
      .map((n) => `<m:Lieferscheinnummer>${n}</m:Lieferscheinnummer>`)
      .join('');
    expectInvalid(decode(many), 'lieferavisBestaetigenType/Lieferscheinnummer: 1000 elements, at most 999');
    expectInvalid(
      decode(
        '<m:Lieferscheinnummer>LS1</m:Lieferscheinnummer><m:Lieferscheinnummer>LS 2</m:Lieferscheinnummer>',
      ),
      "lieferavisBestaetigenType/Lieferscheinnummer[2]: 'LS 2' is not a delivery-note number",
    );
    expectInvalid(decode('<Lieferscheinnummer>LS1</Lieferscheinnummer>'), '(unqualified)');
  });

  it('refuses v1 and content in the response', () => {
    expectInvalid(decode('<m:Lieferscheinnummer>LS1</m:Lieferscheinnummer>', V1), 'not part of MSV3 v1');
    expectInvalid(
      lieferavisBestaetigen.decodeResponse(
        soapEnvelope('<m:lieferavisBestaetigenResponse><return/></m:lieferavisBestaetigenResponse>'),
      ),
      'return: unexpected element',
    );
    expectInvalid(
      lieferavisBestaetigen.decodeResponse(soapEnvelope('<m:lieferavisBestaetigenResponse/>', V1)),
      'not part of MSV3 v1',
    );
  });
});
