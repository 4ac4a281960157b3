import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { type Gateway, startGateway } from '../../test/gateway.js';
import { until } from '../../test/until.js';
import { loadConfig } from '../config.js';
import { SCENARIO_PASSWORDS, SCENARIO_PZNS, startMockWholesaler } from '../mock/index.js';
import { createWholesalerMetrics } from '../observability/wholesaler-metrics.js';
import { createUpstream } from './upstream.js';

const IN_STOCK = '04114918';
const THRESHOLD = 2;

/**
 * The wholesaler series of `GET /metrics` from real calls: the real app, transports and mock wholesalers.
 * Labels stay bounded: catalogue ids and routes, `custom` for every customer-registered wholesaler, never
 * an account, key, URL or PZN.
 */
describe('wholesaler metrics', () => {
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    gw = await startGateway({
      database,
      env: {
        BREAKER_FAILURE_THRESHOLD: String(THRESHOLD),
        UPSTREAM_HEADERS_TIMEOUT_MS: '1000',
        ALLOW_PRIVATE_ENDPOINTS: 'true',
      },
      mockOptions: { live: { lateAnswerMs: 3_000, slowAnswerMs: 500 } },
    });
  });
  afterAll(async () => {
    await gw.close();
    await database.dispose();
  });

  const metrics = async () => (await gw.inject({ url: '/metrics', key: null, credentials: null })).body;
  const availability = (wholesaler: string, pzn = IN_STOCK, options: { password?: string } = {}) =>
    gw.inject({
      url: '/v1/availability',
      body: { wholesaler, items: [{ pzn, quantity: 1 }] },
      key: 'live',
      ...(options.password === undefined
        ? {}
        : { credentials: { username: 'apotheke1', password: options.password } }),
    });

  it('counts calls by wholesaler, route, operation and outcome, and times those sent', async () => {
    expect((await availability('phoenix')).statusCode).toBe(200);
    const sandbox = await gw.inject({
      url: '/v1/availability',
      body: { wholesaler: 'phoenix', items: [{ pzn: IN_STOCK, quantity: 1 }] },
    });
    expect(sandbox.statusCode).toBe(200);
    const text = await metrics();
    expect(text).toContain(
      'msv3_gateway_wholesaler_calls_total{wholesaler="phoenix",route="live",operation="verfuegbarkeitAnfragen",outcome="ok"} 1',
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_calls_total{wholesaler="phoenix",route="sandbox",operation="verfuegbarkeitAnfragen",outcome="ok"} 1',
    );
    expect(text).toMatch(
      /msv3_gateway_wholesaler_call_duration_seconds_count\{wholesaler="phoenix",route="live",operation="verfuegbarkeitAnfragen"\} 1/,
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_circuits{wholesaler="phoenix",route="live",state="closed"} 1',
    );
  });

  it('tells a rejected password, a timeout and an open circuit apart', async () => {
    expect(
      (await availability('phoenix', IN_STOCK, { password: SCENARIO_PASSWORDS.REJECTED })).statusCode,
    ).toBe(401);
    expect((await availability('phoenix', SCENARIO_PZNS.LATE_ANSWER.pzn)).statusCode).toBe(504);
    for (let i = 0; i < THRESHOLD; i++) expect((await availability('offline')).statusCode).toBe(502);
    expect((await availability('offline')).statusCode).toBe(503);

    const text = await metrics();
    const series = (outcome: string, wholesaler = 'phoenix') =>
      `msv3_gateway_wholesaler_calls_total{wholesaler="${wholesaler}",route="live",operation="verfuegbarkeitAnfragen",outcome="${outcome}"}`;
    expect(text).toContain(`${series('wholesaler_credentials_rejected')} 1`);
    expect(text).toContain(`${series('wholesaler_timeout')} 1`);
    expect(text).toContain(
      'msv3_gateway_wholesaler_timeouts_total{wholesaler="phoenix",route="live",operation="verfuegbarkeitAnfragen",phase="headers"} 1',
    );
    expect(text).toContain(`${series('wholesaler_unreachable', 'offline')} ${THRESHOLD}`);
    expect(text).toContain(`${series('wholesaler_circuit_open', 'offline')} 1`);
    expect(text).toContain(
      'msv3_gateway_wholesaler_circuit_openings_total{wholesaler="offline",route="live"} 1',
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_circuits{wholesaler="offline",route="live",state="open"} 1',
    );
    // A refused call was never sent: it is counted, but not timed.
    expect(text).toMatch(
      new RegExp(
        `msv3_gateway_wholesaler_call_duration_seconds_count\\{wholesaler="offline",route="live",operation="verfuegbarkeitAnfragen"\\} ${THRESHOLD}\\n`,
      ),
    );
  });

  it('shows the calls in flight while they run', async () => {
    const slow = availability('phoenix', SCENARIO_PZNS.SLOW_ANSWER.pzn);
    const during = await until(
      'the slow call in flight',
      async () => {
        const text = await metrics();
        return text.includes('msv3_gateway_wholesaler_calls_in_flight{wholesaler="phoenix",route="live"} 1')
          ? text
          : undefined;
      },
      5_000,
    );
    expect(during).toContain('msv3_gateway_wholesaler_calls_queued{wholesaler="phoenix",route="live"} 0');
    expect((await slow).statusCode).toBe(200);
    expect(await metrics()).toContain(
      'msv3_gateway_wholesaler_calls_in_flight{wholesaler="phoenix",route="live"} 0',
    );
  });

  it('labels every customer-registered wholesaler `custom`, never by its id, account or URL', async () => {
    const accounts = [gw.keys.test, await gw.createKey('test'), await gw.createKey('test')];
    for (const key of accounts) {
      const registered = await gw.inject({
        method: 'POST',
        url: '/v1/wholesalers/custom',
        key: key.secret,
        body: { name: 'Hausapotheke Nord', endpoint: gw.mocks.testServer.baseUrl({ tenant: 'custom/nord' }) },
      });
      expect(registered.statusCode).toBe(200);
      const id = (registered.json() as { wholesaler: { id: string } }).wholesaler.id;
      const called = await gw.inject({
        url: '/v1/availability',
        key: key.secret,
        body: { wholesaler: `${id}_test`, items: [{ pzn: IN_STOCK, quantity: 1 }] },
      });
      expect(called.statusCode).toBe(200);
    }
    const text = await metrics();
    expect(text).toContain(
      'msv3_gateway_wholesaler_calls_total{wholesaler="custom",route="test_server",operation="verfuegbarkeitAnfragen",outcome="ok"} 3',
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_circuits{wholesaler="custom",route="test_server",state="closed"} 3',
    );
    expect(text).not.toMatch(/custom-|acct_|127\.0\.0\.1|04114918/);
  });
});

describe('probe metrics', () => {
  it("count each probe by its target's labels and keep the last one for the status page", async () => {
    const mock = await startMockWholesaler();
    const database = await createTestDatabase('sqlite');
    const registry = new Registry();
    const metrics = createWholesalerMetrics(registry);
    const upstream = createUpstream({
      config: loadConfig({}),
      db: database.db,
      catalogue: [
        { id: 'phoenix', name: 'PHOENIX', version: 2, live: { baseUrl: mock.baseUrl({ tenant: 'live/p' }) } },
      ],
      sandboxUrl: () => mock.url,
      metrics,
    });
    try {
      const owner = { accountId: 'acct_1', mode: 'live' as const };
      const endpoint = (await upstream.deps.registry.resolve(owner, 'phoenix')).endpoint;
      const url = `${endpoint.baseUrl}/verbindungTesten`;
      expect((await upstream.probe({ target: endpoint.target, custom: false, url, version: 2 })).up).toBe(
        true,
      );
      const closed = url.replace(/:\d+\//, ':9/');
      expect(
        (await upstream.probe({ target: endpoint.target, custom: false, url: closed, version: 2 })).up,
      ).toBe(false);
      const text = await registry.metrics();
      expect(text).toContain(
        'msv3_gateway_wholesaler_probes_total{wholesaler="phoenix",route="live",result="up"} 1',
      );
      expect(text).toContain(
        'msv3_gateway_wholesaler_probes_total{wholesaler="phoenix",route="live",result="down"} 1',
      );
      expect(text).toContain('msv3_gateway_wholesaler_probe_up{wholesaler="phoenix",route="live"} 0');
      expect(metrics.status().groups[0]?.lastProbe).toMatchObject({
        up: false,
        reason: 'unreachable: ECONNREFUSED',
      });
    } finally {
      await upstream.close();
      await mock.close();
      await database.dispose();
    }
  });
});
