import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import {
  type InterceptingWholesaler,
  startInterceptingWholesaler,
} from '../../../test/intercepting-wholesaler.js';

const connectionTest = (wholesaler: string, key: 'test' | 'live' | string = 'test') => ({
  url: '/v1/connection/test',
  body: { wholesaler },
  key,
});

describeEachDialect('POST /v1/connection/test', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase(), env: { ALLOW_PRIVATE_ENDPOINTS: 'true' } });
  });
  afterAll(() => gw.close());

  it('checks the credentials with verbindungTesten and reports the round trip', async () => {
    const before = gw.mocks.sandbox.requestCount('verbindungTesten');
    const response = await gw.inject(connectionTest('phoenix'));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      connected: true,
      wholesaler: 'phoenix',
      latency_ms: expect.any(Number),
      route: 'sandbox',
      warnings: [],
      tolerated_deviations: [],
    });
    expect(Number.isInteger(response.json().latency_ms)).toBe(true);
    expect(gw.mocks.sandbox.requestCount('verbindungTesten')).toBe(before + 1);
  });

  it('tells a rejection by the wholesaler (401 wholesaler_credentials_rejected) from a bad API key', async () => {
    const rejected = await gw.inject({
      ...connectionTest('phoenix'),
      credentials: { username: 'apotheke1', password: 'wrong-password' },
    });
    expect(rejected.statusCode).toBe(401);
    expect(rejected.json()).toMatchObject({
      error: 'wholesaler_credentials_rejected',
      error_code: '1102',
      wholesaler: 'phoenix',
      upstream: { http_status: 401 },
    });
    const forbidden = await gw.inject({
      ...connectionTest('phoenix'),
      credentials: { username: 'apotheke1', password: 'forbidden' },
    });
    expect(forbidden.statusCode).toBe(401);
    expect(forbidden.json().upstream.http_status).toBe(403);
    const badKey = await gw.inject({ ...connectionTest('phoenix'), key: 'pk_test_nonsense' });
    expect(badKey.statusCode).toBe(401);
    expect(badKey.json().error).toBe('api_key_invalid');
  });

  it('needs X-MSV3-Username and X-MSV3-Password (400 wholesaler_credentials_missing)', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'X-MSV3-Username'],
      [{ 'x-msv3-username': 'apotheke1' }, 'X-MSV3-Password'],
      [{ 'x-msv3-password': 'secret' }, 'X-MSV3-Username'],
      [{ 'x-msv3-username': 'not a customer id', 'x-msv3-password': 'secret' }, 'X-MSV3-Username'],
    ];
    for (const [headers, param] of cases) {
      const response = await gw.inject({ ...connectionTest('phoenix'), credentials: null, headers });
      expect({ param, status: response.statusCode }).toEqual({ param, status: 400 });
      expect(response.json()).toMatchObject({
        error: 'wholesaler_credentials_missing',
        param,
        wholesaler: 'phoenix',
      });
    }
  });

  it('answers 404 for unknown ids, test servers with live keys and ones without a test server', async () => {
    for (const [id, key] of [
      ['nobody', 'test'],
      ['phoenix_test', 'live'],
      ['aep_test', 'test'],
      ['aep', 'live'],
    ] as const) {
      const response = await gw.inject(connectionTest(id, key));
      expect({ id, key, status: response.statusCode, error: response.json().error }).toEqual({
        id,
        key,
        status: 404,
        error: 'wholesaler_not_found',
      });
    }
  });

  it('answers 502 wholesaler_unreachable when nothing listens at the endpoint', async () => {
    const response = await gw.inject(connectionTest('offline', 'live'));
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({
      error: 'wholesaler_unreachable',
      error_code: '1500',
      wholesaler: 'offline',
    });
  });

  it('verifies a custom wholesaler on the first success against its endpoint, with capabilities from its contract', async () => {
    const key = await gw.createKey('live');
    const endpoint = gw.mocks.live.baseUrl({ tenant: 'custom/hausapotheke', version: 2 });
    const { wholesaler } = (
      await gw.inject({
        url: '/v1/wholesalers/custom',
        body: { name: 'Hausapotheke', endpoint },
        key: key.secret,
      })
    ).json();
    expect(wholesaler).toMatchObject({ verified: false, capabilities: [] });

    const failed = await gw.inject({
      ...connectionTest(wholesaler.id, key.secret),
      credentials: { username: 'apo1nobulk', password: 'wrong-password' },
    });
    expect(failed.statusCode).toBe(401);
    expect((await listed(gw, key.secret, wholesaler.id)).verified).toBe(false);

    const contractsBefore = gw.mocks.live.requestCount('vertragsdatenAbfragen');
    const ok = await gw.inject({
      ...connectionTest(wholesaler.id, key.secret),
      credentials: { username: 'apo1nobulk', password: 'secret' },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      connected: true,
      route: 'live',
      warnings: [],
      tolerated_deviations: [],
    });
    expect(gw.mocks.live.requestCount('vertragsdatenAbfragen')).toBe(contractsBefore + 1);
    const verified = await listed(gw, key.secret, wholesaler.id);
    expect(verified.verified).toBe(true);
    expect(verified.capabilities).toEqual([
      'availability',
      'order',
      'order_status',
      'contracts',
      'deliveries',
      'returns',
      'return_offers',
      'documents',
    ]);

    // Verified once: later tests do not fetch the contract again.
    await gw.inject(connectionTest(wholesaler.id, key.secret));
    expect(gw.mocks.live.requestCount('vertragsdatenAbfragen')).toBe(contractsBefore + 1);
  });

  it('verifies a test-mode custom wholesaler only through `<id>_test`, never through the sandbox', async () => {
    const key = await gw.createKey('test');
    const endpoint = gw.mocks.testServer.baseUrl({ tenant: 'custom/onprem', version: 1 });
    const { wholesaler } = (
      await gw.inject({
        url: '/v1/wholesalers/custom',
        body: { name: 'On premise', endpoint, msv3_version: 1 },
        key: key.secret,
      })
    ).json();

    const viaSandbox = await gw.inject(connectionTest(wholesaler.id, key.secret));
    expect(viaSandbox.json()).toMatchObject({ connected: true, route: 'sandbox' });
    expect((await listed(gw, key.secret, wholesaler.id)).verified).toBe(false);

    const testServerCalls = gw.mocks.testServer.requestCount('verbindungTesten');
    const viaTestServer = await gw.inject(connectionTest(`${wholesaler.id}_test`, key.secret));
    expect(viaTestServer.json()).toMatchObject({
      connected: true,
      route: 'test_server',
      wholesaler: `${wholesaler.id}_test`,
    });
    expect(gw.mocks.testServer.requestCount('verbindungTesten')).toBe(testServerCalls + 1);
    const verified = await listed(gw, key.secret, wholesaler.id);
    expect(verified).toMatchObject({ verified: true, msv3_version: 1 });
    expect(verified.capabilities).toEqual([
      'availability',
      'bulk_availability',
      'order',
      'order_status',
      'contracts',
      'return_offers',
    ]);
    expect((await listed(gw, key.secret, `${wholesaler.id}_test`)).verified).toBe(true);
  });
});

describeEachDialect('POST /v1/connection/test against an endpoint whose answers deviate', (getDatabase) => {
  let gw: Gateway;
  let proxy: InterceptingWholesaler;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase(), env: { ALLOW_PRIVATE_ENDPOINTS: 'true' } });
    proxy = await startInterceptingWholesaler();
    proxy.target = new URL(gw.mocks.live.url).origin;
  });
  afterAll(async () => {
    await proxy?.close();
    await gw?.close();
  });

  /** A custom wholesaler on a live key whose calls pass the proxy in front of the live mock. */
  async function registerBehindProxy(name: string): Promise<{ id: string; key: string }> {
    const key = await gw.createKey('live');
    const mockBase = new URL(gw.mocks.live.baseUrl({ tenant: `custom/${name}`, version: 2 }));
    const { wholesaler } = (
      await gw.inject({
        url: '/v1/wholesalers/custom',
        body: { name, endpoint: `${proxy.url}${mockBase.pathname}` },
        key: key.secret,
      })
    ).json();
    return { id: wholesaler.id, key: key.secret };
  }

  it('leaves the wholesaler unverified and says why when its contract data cannot be decoded', async () => {
    const { id, key } = await registerBehindProxy('vertrag-kaputt');
    proxy.interceptNext('vertragsdatenAbfragen', {
      answer: (xml) => xml.replace('<m:Tag>Mo</m:Tag>', '<m:Tag>Montag</m:Tag>'),
    });
    const broken = await gw.inject({ ...connectionTest(id, key) });
    expect(broken.statusCode).toBe(200);
    expect(broken.json()).toEqual({
      connected: true,
      wholesaler: id,
      latency_ms: expect.any(Number),
      route: 'live',
      warnings: [
        {
          error: 'wholesaler_bad_response',
          message: `The contract data of ${id} (vertragsdatenAbfragen) could not be read, so it stays unverified and without capabilities; the next connection test tries again. The answer of ${id} could not be decoded: return/Bestellfenster[1]/Tag: 'Montag' is not one of Mo, Di, Mi, Do, Fr, Sa, So`,
        },
      ],
      tolerated_deviations: [],
    });
    expect(await listed(gw, key, id)).toMatchObject({ verified: false, capabilities: [] });

    // Readable again: the next test verifies it.
    const fine = await gw.inject({ ...connectionTest(id, key) });
    expect(fine.json()).toMatchObject({ warnings: [], tolerated_deviations: [] });
    expect(await listed(gw, key, id)).toMatchObject({ verified: true });
  });

  it('says so when the contract call fails, e.g. with HTTP 503, and verifies nothing', async () => {
    const { id, key } = await registerBehindProxy('vertrag-weg');
    proxy.interceptNext('vertragsdatenAbfragen', {
      answer: () => 'Service Unavailable',
      status: 503,
      contentType: 'text/plain',
    });
    const response = await gw.inject({ ...connectionTest(id, key) });
    expect(response.statusCode).toBe(200);
    expect(response.json().warnings).toEqual([
      {
        error: 'wholesaler_unavailable',
        message: expect.stringContaining(`The wholesaler ${id} is unavailable (it answered HTTP 503).`),
      },
    ]);
    expect(await listed(gw, key, id)).toMatchObject({ verified: false, capabilities: [] });
  });

  it('lists and counts the tolerated deviations of the endpoint, and only its own', async () => {
    const { id, key } = await registerBehindProxy('vertrag-qualifiziert');
    const other = await registerBehindProxy('vertrag-sauber');
    const qualifyReturn = (xml: string) =>
      xml.replace('<return', '<m:return').replace('</return>', '</m:return>');
    proxy.interceptNext('vertragsdatenAbfragen', { answer: qualifyReturn });
    const response = await gw.inject({ ...connectionTest(id, key) });
    expect(response.json()).toMatchObject({
      warnings: [],
      tolerated_deviations: [
        {
          deviation: 'qualified_return',
          description: expect.stringContaining('`return` element is in the MSV3 namespace'),
          first_seen_in: 'vertragsdatenAbfragen',
        },
      ],
    });
    expect(await listed(gw, key, id)).toMatchObject({ verified: true });
    const clean = await gw.inject({ ...connectionTest(other.id, other.key) });
    expect(clean.json()).toMatchObject({ warnings: [], tolerated_deviations: [] });

    const metrics = await gw.inject({ url: '/metrics', key: null, credentials: null });
    expect(metrics.body).toContain(
      // Custom wholesalers share the label `custom`, as in the call metrics.
      'msv3_gateway_wholesaler_answer_deviations_total{wholesaler="custom",deviation="qualified_return"} 1',
    );
  });
});

async function listed(
  gw: Gateway,
  key: string,
  id: string,
): Promise<{ verified: boolean; capabilities: string[]; msv3_version: number }> {
  const response = await gw.inject({ url: '/v1/wholesalers', key, credentials: null });
  const found = (response.json().wholesalers as { id: string }[]).find((w) => w.id === id);
  if (found === undefined) throw new Error(`${id} is not listed`);
  return found as never;
}
