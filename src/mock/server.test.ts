import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCredentials } from '../msv3/credentials.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { verfuegbarkeitAnfragen } from '../msv3/operations/verfuegbarkeit-anfragen.js';
import { probeRequest } from '../msv3/probe-request.js';
import { startMockWholesaler } from './server.js';
import {
  basic,
  CLIENT_ID,
  CUSTOMER,
  envelope,
  orderRequest,
  PASSWORD,
  type Sandbox,
  startSandbox,
  subOrder,
} from './test-support/sandbox.js';

const CONNECTION_TEST = envelope(
  `<m:verbindungTesten><clientSoftwareKennung>${CLIENT_ID}</clientSoftwareKennung></m:verbindungTesten>`,
);

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

describe('HTTP Basic authentication', () => {
  it('challenges a request without credentials with 401 and Basic realm="MSV3"', async () => {
    const response = await sandbox.raw(CONNECTION_TEST, { authorization: null });
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Basic realm="MSV3"');
  });

  it('answers a non-pre-emptive client: 401 first, then success with credentials', async () => {
    expect((await sandbox.raw(CONNECTION_TEST, { authorization: null })).status).toBe(401);
    const second = await sandbox.raw(CONNECTION_TEST);
    expect(second.status).toBe(200);
    expect(second.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    expect(second.body).toContain('verbindungTestenResponse');
  });

  it.each([
    ['a malformed header', 'Bearer abc'],
    ['a token without a colon', `Basic ${Buffer.from('apotheke1').toString('base64')}`],
    ['an empty password', basic('apotheke1', '')],
    ['a user name that is no Kundenkennung', basic('apo theke', 'x')],
    ['a user name with two branch prefixes', basic('A\\B\\c', 'x')],
    ['a user name longer than 80 characters', basic('a'.repeat(81), 'x')],
    ['the scenario password wrong-password', basic(CUSTOMER, 'wrong-password')],
  ])('rejects %s with 401 and the challenge', async (_case, authorization) => {
    const response = await sandbox.raw(CONNECTION_TEST, { authorization });
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Basic realm="MSV3"');
  });

  it('answers the scenario password forbidden with 403', async () => {
    const response = await sandbox.raw(CONNECTION_TEST, { authorization: basic(CUSTOMER, 'forbidden') });
    expect(response.status).toBe(403);
  });

  it('lets any well-formed Kundenkennung with any password in (sandbox mode)', async () => {
    for (const username of ['apotheke1', 'NL01\\apo4711', 'X']) {
      await expect(
        sandbox.ok(verbindungTesten, { clientSoftwareId: CLIENT_ID }, { username, password: 'p' }),
      ).resolves.toEqual({});
    }
  });

  it('reports a rejected login to the gateway client as credentials_rejected', async () => {
    const error = await sandbox.fails(
      verbindungTesten,
      { clientSoftwareId: CLIENT_ID },
      { password: 'wrong-password' },
    );
    expect(error).toMatchObject({
      reason: 'credentials_rejected',
      status: 401,
      challenge: 'Basic realm="MSV3"',
    });
    const forbidden = await sandbox.fails(
      verbindungTesten,
      { clientSoftwareId: CLIENT_ID },
      { password: 'forbidden' },
    );
    expect(forbidden).toMatchObject({ reason: 'credentials_rejected', status: 403 });
  });

  it('with fixed credentials accepts only those (scenario passwords have no meaning then)', async () => {
    const fixed = await startSandbox({ credentials: { username: 'NL01\\apo4711', password: 'geheim' } });
    try {
      const as = (username: string, password: string) =>
        fixed.call(verbindungTesten, { clientSoftwareId: CLIENT_ID }, { username, password });
      expect((await as('NL01\\apo4711', 'geheim')).ok).toBe(true);
      for (const [user, password] of [
        ['NL01\\apo4711', 'Geheim'],
        ['NL01\\apo4712', 'geheim'],
        ['NL01\\apo4711', 'forbidden'],
      ] as const) {
        const result = await as(user, password);
        expect(result.ok ? 'accepted' : result.error.reason).toBe('credentials_rejected');
      }
    } finally {
      await fixed.close();
    }
  });
});

describe('HTTP rules of a JAX-WS SOAP 1.2 endpoint', () => {
  it('refuses SOAP 1.1 text/xml with 415 in the JAX-WS wording', async () => {
    const response = await sandbox.raw(CONNECTION_TEST, { contentType: 'text/xml; charset=utf-8' });
    expect(response.status).toBe(415);
    expect(response.body).toBe(
      'Unsupported Content-Type: text/xml; charset=utf-8 Supported ones are: [application/soap+xml]',
    );
  });

  it('accepts application/soap+xml with or without an action parameter, in any case', async () => {
    for (const contentType of [
      'application/soap+xml',
      'Application/SOAP+XML; charset=UTF-8',
      'application/soap+xml; charset=utf-8; action="urn:msv3:v2:Msv3:verbindungTesten"',
      'application/soap+xml; action="urn:whatever"',
    ]) {
      expect((await sandbox.raw(CONNECTION_TEST, { contentType })).status).toBe(200);
    }
  });

  it('answers other methods with 405 and Allow: POST', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await sandbox.raw('', { method });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
    }
  });

  it('answers GET ?wsdl with 404 and a short note instead of the WSDL', async () => {
    const response = await sandbox.raw('', { method: 'GET', path: '/msv3/v2.0/bestellen?wsdl' });
    expect(response.status).toBe(404);
    expect(response.body).toContain('no WSDL');
  });

  it('refuses a body above the size cap with 413', async () => {
    const small = await startSandbox({ maxBodyBytes: 2048 });
    try {
      const response = await small.raw(
        envelope(`<m:verbindungTesten>${' '.repeat(4096)}</m:verbindungTesten>`),
      );
      expect(response.status).toBe(413);
    } finally {
      await small.close();
    }
  });

  it('answers the credential-free probe (verbindungTesten without credentials) with 401, which is up', async () => {
    for (const version of [1, 2] as const) {
      const probe = await sandbox.transport.probe({
        target: 'mock',
        url: `${sandbox.mock.baseUrl({ version })}/verbindungTesten`,
        request: probeRequest(version, CLIENT_ID),
      });
      expect({ version, ...probe }).toMatchObject({ version, up: true, status: 401 });
    }
  });
});

describe('dispatch on the body root element', () => {
  it('ignores the path: any service path, any case, even none', async () => {
    for (const path of ['/test/msv3/v2.0/bestellen', '/TEST/MSV3/V2.0/VERBINDUNGTESTEN', '/', '/foo/bar']) {
      const response = await sandbox.raw(CONNECTION_TEST, { path });
      expect(response.status, path).toBe(200);
      expect(response.body).toContain('verbindungTestenResponse');
    }
  });

  it('answers an unknown root element with a plain SOAP fault (no MSV3 bean), HTTP 500', async () => {
    const response = await sandbox.raw(envelope('<m:bestellungStornieren/>'));
    expect(response.status).toBe(500);
    expect(response.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
    expect(response.body).toContain('<env:Value>env:Sender</env:Value>');
    expect(response.body).toContain('Cannot find dispatch method for {urn:msv3:v2}bestellungStornieren');
  });

  it('answers a non-MSV3 namespace and a SOAP 1.1 envelope with plain faults', async () => {
    const foreign = await sandbox.raw(envelope('<x:verbindungTesten xmlns:x="urn:other"/>'));
    expect(foreign.body).toContain('Cannot find dispatch method for {urn:other}verbindungTesten');
    const soap11 = await sandbox.raw(
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>',
    );
    expect(soap11.status).toBe(500);
    expect(soap11.body).toContain('env:VersionMismatch');
  });

  it('dispatches v1 and v2 by namespace on the same URL', async () => {
    const v1 = await sandbox.raw(CONNECTION_TEST.replace('urn:msv3:v2', 'urn:msv3:v1'), {
      path: '/test/msv3/x',
    });
    expect(v1.body).toContain('xmlns:m="urn:msv3:v1"');
    expect(v1.body).toContain('<m:verbindungTestenResponse/>');
  });

  it('a v1-only server answers v2-only operations with a fault, and v2 requests too', async () => {
    const v1Only = await startSandbox({ versions: [1] });
    try {
      const response = await v1Only.raw(
        envelope(
          `<m:lieferavisAbfrageNeu><clientSoftwareKennung>x</clientSoftwareKennung></m:lieferavisAbfrageNeu>`,
        ),
      );
      expect(response.status).toBe(500);
      expect(response.body).toContain('Cannot find dispatch method for {urn:msv3:v2}lieferavisAbfrageNeu');
      const error = await v1Only.fails(verbindungTesten, { clientSoftwareId: CLIENT_ID }, { version: 2 });
      expect(error).toMatchObject({ reason: 'soap_fault', fault: { kind: 'Unknown', soapCode: 'Sender' } });
      expect((await v1Only.call(verbindungTesten, { clientSoftwareId: CLIENT_ID }, { version: 1 })).ok).toBe(
        true,
      );
    } finally {
      await v1Only.close();
    }
  });

  it('a v1-only operation name in the v1 namespace does not exist: lieferavis in urn:msv3:v1 is a fault', async () => {
    const response = await sandbox.raw(
      envelope(
        `<m:lieferavisAbfrageNeu><clientSoftwareKennung>x</clientSoftwareKennung></m:lieferavisAbfrageNeu>`,
        1,
      ),
    );
    expect(response.body).toContain('Cannot find dispatch method for {urn:msv3:v1}lieferavisAbfrageNeu');
  });

  it('a version segment in the path restricts that URL to its version', async () => {
    const response = await sandbox.raw(CONNECTION_TEST, { path: '/test/msv3/v1.0/verbindungTesten' });
    expect(response.status).toBe(500);
    expect(response.body).toContain('Cannot find dispatch method');
  });

  it('counts the requests that reached an operation', async () => {
    const own = await startSandbox();
    try {
      await own.ok(verbindungTesten, { clientSoftwareId: CLIENT_ID });
      await own.ok(verbindungTesten, { clientSoftwareId: CLIENT_ID }, { version: 1 });
      await own.raw(CONNECTION_TEST, { authorization: null });
      expect(own.mock.requestCount('verbindungTesten')).toBe(2);
      expect(own.mock.requestCount()).toBe(2);
    } finally {
      await own.close();
    }
  });
});

describe('tenants', () => {
  it('keeps separate state per path prefix: the same customer under two tenants sees separate notices', async () => {
    const order = orderRequest(subOrder([['04114918', 2]]));
    await sandbox.ok(bestellen, order, { tenant: 'sandbox/phoenix' });
    const phoenix = await sandbox.ok(
      lieferavisAbfrageNeu,
      { clientSoftwareId: CLIENT_ID },
      { tenant: 'sandbox/phoenix' },
    );
    const sanacorp = await sandbox.ok(
      lieferavisAbfrageNeu,
      { clientSoftwareId: CLIENT_ID },
      { tenant: 'sandbox/sanacorp' },
    );
    expect(phoenix.notices).toHaveLength(1);
    expect(sanacorp.notices).toHaveLength(0);
    expect(sandbox.mock.placedOrderCount({ tenant: 'sandbox/phoenix' })).toBe(1);
    expect(sandbox.mock.placedOrderCount({ tenant: 'SANDBOX/Sanacorp' })).toBe(0);
    expect(sandbox.mock.deliveryNotices('sandbox/phoenix', CUSTOMER)).toHaveLength(1);
  });

  it('keeps separate state per customer within a tenant', async () => {
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), {
      tenant: 'iso',
      username: 'apoA',
    });
    const other = await sandbox.ok(
      lieferavisAbfrageNeu,
      { clientSoftwareId: CLIENT_ID },
      { tenant: 'iso', username: 'apoB' },
    );
    expect(other.notices).toHaveLength(0);
    expect(sandbox.mock.placedOrderCount({ tenant: 'iso', customerId: 'apoA' })).toBe(1);
    expect(sandbox.mock.placedOrderCount({ tenant: 'iso', customerId: 'apoB' })).toBe(0);
  });

  it('builds base URLs that lead back to the tenant', () => {
    expect(sandbox.mock.baseUrl({ tenant: 'sandbox/phoenix', version: 1 })).toBe(
      `${sandbox.mock.url}/sandbox/phoenix/msv3/v1.0`,
    );
    expect(sandbox.mock.baseUrl()).toBe(`${sandbox.mock.url}/msv3/v2.0`);
  });
});

describe('lifecycle', () => {
  it('starts on a free loopback port and closes cleanly', async () => {
    const mock = await startMockWholesaler();
    expect(mock.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(mock.port).toBeGreaterThan(0);
    await mock.close();
  });

  it('refuses invalid options at start-up', async () => {
    await expect(startMockWholesaler({ versions: [] })).rejects.toThrow(RangeError);
    await expect(startMockWholesaler({ slowAnswerMs: 120_000 })).rejects.toThrow(/slowAnswerMs/);
    await expect(startMockWholesaler({ nightHours: { from: 5, to: 5 } })).rejects.toThrow(RangeError);
    await expect(startMockWholesaler({ timeZone: 'Mars/Olympus' })).rejects.toThrow(RangeError);
  });

  it('never writes the password into its log lines', async () => {
    const lines: string[] = [];
    const own = await startSandbox({ log: (line) => lines.push(line) });
    try {
      await own.call(verfuegbarkeitAnfragen, {
        clientSoftwareId: CLIENT_ID,
        id: '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b',
        articles: [{ pzn: '04114918', quantity: 1 }],
      });
      await own.raw(CONNECTION_TEST, { authorization: basic(CUSTOMER, 'wrong-password') });
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        /^POST \/test\/msv3\/v2\.0\/verfuegbarkeitAnfragen verfuegbarkeitAnfragen v2 → 200/,
      );
      expect(lines.join('\n')).not.toContain(PASSWORD);
      expect(lines.join('\n')).not.toContain(Buffer.from(`${CUSTOMER}:${PASSWORD}`).toString('base64'));
      expect(createCredentials(CUSTOMER, PASSWORD).toString()).toBe('[redacted]');
    } finally {
      await own.close();
    }
  });
});
