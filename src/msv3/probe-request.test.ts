import { describe, expect, it } from 'vitest';
import { MSV3_V1_NS, MSV3_V2_NS } from './envelope.js';
import { probeRequest } from './probe-request.js';
import { transportTestRig } from './test-support/local-server.js';
import { validateEnvelopes, xsdUnavailableReason } from './test-support/xsd.js';

const { server, transport } = transportTestRig();

/** What the transport's probe puts on the wire for `version`, seen by a wholesaler answering 401. */
async function sentProbe(version: 1 | 2) {
  const wholesaler = await server((_req, res) =>
    res.writeHead(401, { 'www-authenticate': 'Basic realm="MSV3"' }).end(),
  );
  const result = await transport().probe({
    target: 'phoenix',
    url: wholesaler.url,
    request: probeRequest(version, 'msv3-gateway 0.1.0'),
  });
  expect(result).toMatchObject({ up: true, status: 401 });
  const [seen] = wholesaler.requests;
  if (seen === undefined) throw new Error('the probe sent nothing');
  return seen;
}

describe('the credential-free probe request', () => {
  it.each([
    [1, MSV3_V1_NS],
    [2, MSV3_V2_NS],
  ] as const)(
    'is verbindungTesten of MSV3 v%i, with its namespace and SOAP action, without credentials',
    async (version, ns) => {
      const seen = await sentProbe(version);
      expect(seen.headers.authorization).toBeUndefined();
      expect(seen.headers['content-type']).toBe(
        `application/soap+xml; charset=utf-8; action="urn:msv3:v${version}:Msv3:verbindungTesten"`,
      );
      expect(seen.body).toContain(`xmlns:m="${ns}"`);
      expect(seen.body).toContain(
        '<m:verbindungTesten><clientSoftwareKennung>msv3-gateway 0.1.0</clientSoftwareKennung></m:verbindungTesten>',
      );
    },
  );
});

// Skips with a visible message (test-support/xsd.ts) when xmllint or ../shared/msv3/xsd is missing.
describe.skipIf(xsdUnavailableReason !== null)('the probe request against the MSV3 XSDs', () => {
  it.each([1, 2] as const)('validates against the v%i schema as sent', async (version) => {
    const seen = await sentProbe(version);
    const [result] = await validateEnvelopes(version, [seen.body]);
    expect(result).toEqual({ valid: true, errors: '' });
  });
});
