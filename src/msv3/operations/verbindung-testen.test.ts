import { describe, expect, it } from 'vitest';
import { connectionTestRequest } from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  expectRefusedInputs,
  soapEnvelope,
  V1,
} from '../test-support/codec-test-kit.js';
import { verbindungTesten } from './verbindung-testen.js';

describeSamples(verbindungTesten, {
  'decodes the v2 request sample': {
    request: 'v2/verbindungTesten.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2' },
  },
  'decodes the empty v2 response sample': { response: 'v2/verbindungTesten.response.xml', decodesTo: {} },
});

describeRoundTrips(verbindungTesten, {
  request: connectionTestRequest,
  more: (version) => {
    it('decodes the encoded response as an empty answer of that version', () => {
      const xml = verbindungTesten.encodeResponse(version, {});
      expect(verbindungTesten.decodeResponse(xml, version)).toEqual({ kind: 'ok', value: {} });
      expectInvalid(verbindungTesten.decodeResponse(xml, version === 1 ? 2 : 1), `found v${version}`);
    });

    it('names the soapAction after the version', () => {
      expect(verbindungTesten.soapAction(version)).toBe(`urn:msv3:v${version}:Msv3:verbindungTesten`);
    });
  },
});

describeXsdValidity(verbindungTesten, {
  title: 'accepts 150 generated v%i requests and the response, and rejects a broken one',
  request: connectionTestRequest,
  cases: (version) => ({
    valid: [verbindungTesten.encodeResponse(version, {})],
    invalid: [verbindungTesten.encodeRequest(version, { clientSoftwareId: 'x'.repeat(81) })],
  }),
});

describe('verbindungTesten decoders refuse what the schema refuses', () => {
  const request = (children: string, ns?: string) =>
    soapEnvelope(`<m:verbindungTesten>${children}</m:verbindungTesten>`, ns);
  const decodeRequest = (xml: string) => verbindungTesten.decodeRequest(xml);
  const decodeResponse = (xml: string) => verbindungTesten.decodeResponse(xml);

  it('refuses a wrapper outside the MSV3 namespaces', () => {
    expectInvalid(
      decodeRequest(request('<clientSoftwareKennung>a</clientSoftwareKennung>', 'urn:other')),
      'not in an MSV3 namespace',
    );
  });

  it('refuses another operation’s wrapper', () => {
    expectInvalid(decodeRequest(verbindungTesten.encodeResponse(2, {})), 'expected <verbindungTesten>');
  });

  it('refuses a missing, qualified, empty or too long clientSoftwareKennung', () => {
    expectRefusedInputs(decodeRequest, request, [
      ['', 'clientSoftwareKennung: missing required element'],
      [
        '<m:clientSoftwareKennung>a</m:clientSoftwareKennung>',
        'clientSoftwareKennung: element in the wrong namespace: found <m:clientSoftwareKennung> in urn:msv3:v2',
      ],
      ['<clientSoftwareKennung></clientSoftwareKennung>', 'clientSoftwareKennung: length 0'],
    ]);
    expectInvalid(
      decodeRequest(verbindungTesten.encodeRequest(1, { clientSoftwareId: '€'.repeat(81) })),
      'clientSoftwareKennung: length 81',
    );
  });

  it('refuses extra elements and attributes', () => {
    expectInvalid(
      decodeRequest(request('<clientSoftwareKennung>a</clientSoftwareKennung><extra/>', V1)),
      'extra: unexpected element',
    );
    expectRefusedInputs(
      decodeResponse,
      (inner) => soapEnvelope(`<m:verbindungTestenResponse>${inner}</m:verbindungTestenResponse>`),
      [
        ['<return/>', 'return: unexpected element'],
        ['ok', 'character content is not allowed'],
      ],
    );
    expectInvalid(
      decodeRequest(
        soapEnvelope(
          '<m:verbindungTesten Id="1"><clientSoftwareKennung>a</clientSoftwareKennung></m:verbindungTesten>',
        ),
      ),
      '@Id: attribute not allowed here',
    );
  });
});
