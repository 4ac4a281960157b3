import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';

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
    expect(ok.json()).toMatchObject({ connected: true, route: 'live' });
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
