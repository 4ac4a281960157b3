import { describe, expect, it } from 'vitest';
import { confirmDeliveryNoticesRequest } from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  expectRefusedInputs,
  soapEnvelope,
  V1,
} from '../test-support/codec-test-kit.js';
import { lieferavisBestaetigen } from './lieferavis-bestaetigen.js';

describeSamples(lieferavisBestaetigen, {
  'decodes the request sample': {
    request: 'v2/lieferavisBestaetigen.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2', deliveryNoteNumbers: ['LS2025031800123'] },
  },
  'decodes the empty response sample': { response: 'v2/lieferavisBestaetigen.response.xml', decodesTo: {} },
});

describeRoundTrips(lieferavisBestaetigen, {
  request: confirmDeliveryNoticesRequest,
  more: () => {
    it('decodes the encoded empty response', () => {
      expect(lieferavisBestaetigen.decodeResponse(lieferavisBestaetigen.encodeResponse(2, {}), 2)).toEqual({
        kind: 'ok',
        value: {},
      });
    });
  },
});

const numbers = (n: number) => Array.from({ length: n }, (_, k) => `LS${k}`);
const confirming = (deliveryNoteNumbers: string[]) =>
  lieferavisBestaetigen.encodeRequest(2, { clientSoftwareId: '', deliveryNoteNumbers });

describeXsdValidity(lieferavisBestaetigen, {
  title: 'accepts 150 generated requests, 999 numbers and the response; refuses 1000 or a bad number',
  request: confirmDeliveryNoticesRequest,
  cases: () => ({
    valid: [confirming(numbers(999)), lieferavisBestaetigen.encodeResponse(2, {})],
    invalid: [confirming(numbers(1000)), confirming(['LS 1']), confirming([])],
  }),
});

describe('lieferavisBestaetigen decoders refuse what the schema refuses', () => {
  const request = (numbersXml: string, ns?: string) =>
    soapEnvelope(
      `<m:lieferavisBestaetigen><clientSoftwareKennung>a</clientSoftwareKennung><lieferavisBestaetigenType>${numbersXml}</lieferavisBestaetigenType></m:lieferavisBestaetigen>`,
      ns,
    );
  const decode = (xml: string) => lieferavisBestaetigen.decodeRequest(xml);
  const decodeResponse = (xml: string) => lieferavisBestaetigen.decodeResponse(xml);

  it('refuses an empty list, more than 999 numbers and bad numbers', () => {
    const many = numbers(1000)
      .map((n) => `<m:Lieferscheinnummer>${n}</m:Lieferscheinnummer>`)
      .join('');
    expectRefusedInputs(decode, request, [
      ['', 'lieferavisBestaetigenType/Lieferscheinnummer: missing required element'],
      [many, 'lieferavisBestaetigenType/Lieferscheinnummer: 1000 elements, at most 999'],
      [
        '<m:Lieferscheinnummer>LS1</m:Lieferscheinnummer><m:Lieferscheinnummer>LS 2</m:Lieferscheinnummer>',
        "lieferavisBestaetigenType/Lieferscheinnummer[2]: 'LS 2' is not a delivery-note number",
      ],
      ['<Lieferscheinnummer>LS1</Lieferscheinnummer>', '(unqualified)'],
    ]);
  });

  it('refuses v1 and content in the response', () => {
    expectInvalid(
      decode(request('<m:Lieferscheinnummer>LS1</m:Lieferscheinnummer>', V1)),
      'not part of MSV3 v1',
    );
    expectInvalid(
      decodeResponse(
        soapEnvelope('<m:lieferavisBestaetigenResponse><return/></m:lieferavisBestaetigenResponse>'),
      ),
      'return: unexpected element',
    );
    expectInvalid(
      decodeResponse(soapEnvelope('<m:lieferavisBestaetigenResponse/>', V1)),
      'not part of MSV3 v1',
    );
  });
});
