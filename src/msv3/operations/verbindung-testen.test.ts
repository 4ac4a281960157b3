import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Msv3Version } from '../envelope.js';
import { connectionTestRequest } from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  V1,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import { verbindungTesten } from './verbindung-testen.js';

const versions: Msv3Version[] = [1, 2];

describe.skipIf(samplesUnavailableReason !== null)('verbindungTesten shared samples', () => {
  it('decodes the v2 request sample', () => {
    expect(verbindungTesten.decodeRequest(readSample('v2/verbindungTesten.request.xml'))).toEqual({
      kind: 'ok',
      value: { version: 2, request: { clientSoftwareId: 'ExampleWawi 1.4.2' } },
    });
  });

  it('decodes the empty v2 response sample', () => {
    expect(verbindungTesten.decodeResponse(readSample('v2/verbindungTesten.response.xml'))).toEqual({
      kind: 'ok',
      value: {},
    });
  });
});

describe.each(versions)('verbindungTesten v%i round trips', (version) => {
  it('decodes every encoded request to the same model', () => {
    fc.assert(
      fc.property(connectionTestRequest, (request) => {
        expect(verbindungTesten.decodeRequest(verbindungTesten.encodeRequest(version, request))).toEqual({
          kind: 'ok',
          value: { version, request },
        });
      }),
    );
  });

  it('decodes the encoded response as an empty answer of that version', () => {
    const xml = verbindungTesten.encodeResponse(version, {});
    expect(verbindungTesten.decodeResponse(xml, version)).toEqual({ kind: 'ok', value: {} });
    expectInvalid(verbindungTesten.decodeResponse(xml, version === 1 ? 2 : 1), `found v${version}`);
  });

  it('names the soapAction after the version', () => {
    expect(verbindungTesten.soapAction(version)).toBe(`urn:msv3:v${version}:Msv3:verbindungTesten`);
  });
});

describe.skipIf(xsdUnavailableReason !== null)('verbindungTesten against the original XSD', () => {
  it.each(versions)(
    'accepts 150 generated v%i requests and the response, and rejects a broken one',
    async (version) => {
      const requests = fc
        .sample(connectionTestRequest, 150)
        .map((r) => verbindungTesten.encodeRequest(version, r));
      const broken = verbindungTesten.encodeRequest(version, { clientSoftwareId: 'x'.repeat(81) });
      await expectSchemaVerdicts(
        version,
        [...requests, verbindungTesten.encodeResponse(version, {})],
        [broken],
      );
    },
  );
});

describe('verbindungTesten decoders refuse what the schema refuses', () => {
  const request = (children: string, ns?: string) =>
    soapEnvelope(`<m:verbindungTesten>${children}</m:verbindungTesten>`, ns);

  it('refuses a wrapper outside the MSV3 namespaces', () => {
    expectInvalid(
      verbindungTesten.decodeRequest(
        request('<clientSoftwareKennung>a</clientSoftwareKennung>', 'urn:other'),
      ),
      'not in an MSV3 namespace',
    );
  });

  it('refuses another operation’s wrapper', () => {
    expectInvalid(
      verbindungTesten.decodeRequest(verbindungTesten.encodeResponse(2, {})),
      'expected <verbindungTesten>',
    );
  });

  it('refuses a missing, qualified, empty or too long clientSoftwareKennung', () => {
    expectInvalid(
      verbindungTesten.decodeRequest(request('')),
      'clientSoftwareKennung: missing required element',
    );
    expectInvalid(
      verbindungTesten.decodeRequest(request('<m:clientSoftwareKennung>a</m:clientSoftwareKennung>')),
      'clientSoftwareKennung: missing required element (found <m:clientSoftwareKennung> in urn:msv3:v2',
    );
    expectInvalid(
      verbindungTesten.decodeRequest(request('<clientSoftwareKennung></clientSoftwareKennung>')),
      'clientSoftwareKennung: length 0',
    );
    expectInvalid(
      verbindungTesten.decodeRequest(verbindungTesten.encodeRequest(1, { clientSoftwareId: '€'.repeat(81) })),
      'clientSoftwareKennung: length 81',
    );
  });

  it('refuses extra elements and attributes', () => {
    expectInvalid(
      verbindungTesten.decodeRequest(request('<clientSoftwareKennung>a</clientSoftwareKennung><extra/>', V1)),
      'extra: unexpected element',
    );
    expectInvalid(
      verbindungTesten.decodeResponse(
        soapEnvelope('<m:verbindungTestenResponse><return/></m:verbindungTestenResponse>'),
      ),
      'return: unexpected element',
    );
    expectInvalid(
      verbindungTesten.decodeResponse(
        soapEnvelope('<m:verbindungTestenResponse>ok</m:verbindungTestenResponse>'),
      ),
      'character content is not allowed',
    );
    expectInvalid(
      verbindungTesten.decodeRequest(
        soapEnvelope(
          '<m:verbindungTesten Id="1"><clientSoftwareKennung>a</clientSoftwareKennung></m:verbindungTesten>',
        ),
      ),
      '@Id: attribute not allowed here',
    );
  });
});
