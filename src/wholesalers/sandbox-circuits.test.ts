import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { type Gateway, startGateway, type TestKey } from '../../test/gateway.js';
import { silentLogger } from '../../test/logger.js';
import { until } from '../../test/until.js';
import { systemClock } from '../lib/clock.js';
import { SCENARIO_PZNS } from '../mock/index.js';
import { subscribe } from '../webhooks/test-support/fixtures.js';
import { announceBreakerChanges, createStatusAnnouncer } from './status/announcer.js';

const THRESHOLD = 3;
const IN_STOCK = '04114918';

/**
 * The sandbox is shared by every test account, but its failures are simulated per request (scenario
 * PZNs): one account's faults must not pause another account's calls, nor tell its webhooks. Real
 * servers (live and `<id>_test`) share one circuit per endpoint. Real app, transports and mocks.
 */
describe('circuit breakers per sandbox account', () => {
  let database: TestDatabase;
  let gw: Gateway;
  let stopAnnouncing: () => void;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    gw = await startGateway({ database, env: { BREAKER_FAILURE_THRESHOLD: String(THRESHOLD) } });
    // What `watchWholesalerStatus` does in the server: breaker changes become `wholesaler.status_changed`.
    const announcer = createStatusAnnouncer({ db: database.db, clock: systemClock, logger: silentLogger });
    stopAnnouncing = announceBreakerChanges(gw.deps.wholesalerStatus, announcer);
  });
  afterAll(async () => {
    stopAnnouncing();
    await gw.close();
    await database.dispose();
  });

  const availability = (key: TestKey, wholesaler: string, pzn: string) =>
    gw.inject({
      url: '/v1/availability',
      body: { wholesaler, items: [{ pzn, quantity: 1 }] },
      key: key.secret,
    });

  /** Calls until the circuit opens: THRESHOLD broken connections (the mock drops the socket). */
  async function tripCircuit(key: TestKey, wholesaler: string): Promise<void> {
    for (let i = 0; i < THRESHOLD; i++) {
      const failed = await availability(key, wholesaler, SCENARIO_PZNS.CONNECTION_DROP.pzn);
      expect(failed.statusCode).toBe(502);
    }
  }

  async function statusEventAccounts(wholesaler: string): Promise<string[]> {
    const rows = await database.db
      .selectFrom('webhook_events')
      .select('account_id')
      .where('type', '=', 'wholesaler.status_changed')
      .where('wholesaler', '=', wholesaler)
      .execute();
    return rows.map((row) => row.account_id).sort();
  }

  it("opens only the calling account's sandbox circuit: its scenario faults leave other accounts' calls alone", async () => {
    const a = gw.keys.test;
    const b = await gw.createKey('test');
    expect((await availability(b, 'phoenix', IN_STOCK)).statusCode).toBe(200);

    await tripCircuit(a, 'phoenix');
    const paused = await availability(a, 'phoenix', IN_STOCK);
    expect(paused.statusCode).toBe(503);
    expect(paused.json()).toMatchObject({ error: 'wholesaler_circuit_open', wholesaler: 'phoenix' });
    expect(Number(paused.headers['retry-after'])).toBeGreaterThan(0);

    const other = await availability(b, 'phoenix', IN_STOCK);
    expect(other.statusCode).toBe(200);
    // The same account's other sandbox wholesalers have circuits of their own, too.
    expect((await availability(a, 'aep', IN_STOCK)).statusCode).toBe(200);

    const downs = gw.statusChanges.filter((c) => c.status === 'down' && c.route === 'sandbox');
    expect(downs).toEqual([
      expect.objectContaining({
        wholesaler: 'phoenix',
        route: 'sandbox',
        mode: 'test',
        accountId: a.accountId,
        cause: expect.objectContaining({ reason: 'unreachable' }),
      }),
    ]);
  });

  it('tells only the account whose sandbox circuit opened (wholesaler.status_changed)', async () => {
    const a = await gw.createKey('test');
    const b = await gw.createKey('test');
    for (const key of [a, b]) {
      await subscribe(
        database.db,
        { accountId: key.accountId, mode: 'test' },
        {
          url: 'http://127.0.0.1:9/hook',
          wholesaler: 'gehe',
        },
      );
    }
    await tripCircuit(a, 'gehe');
    expect((await availability(a, 'gehe', IN_STOCK)).json().error).toBe('wholesaler_circuit_open');
    expect((await availability(b, 'gehe', IN_STOCK)).statusCode).toBe(200);

    await until('the status event', async () => (await statusEventAccounts('gehe')).length > 0, 5_000, 20);
    expect(await statusEventAccounts('gehe')).toEqual([a.accountId]);
  });

  it.each([
    { route: 'live', wholesaler: 'phoenix', mode: 'live' },
    { route: 'test_server', wholesaler: 'phoenix_test', mode: 'test' },
  ] as const)(
    'keeps one circuit per real endpoint ($route) for all accounts',
    async ({ route, wholesaler, mode }) => {
      const a = await gw.createKey(mode);
      const b = await gw.createKey(mode);
      expect((await availability(b, wholesaler, IN_STOCK)).statusCode).toBe(200);

      await tripCircuit(a, wholesaler);
      for (const key of [a, b]) {
        const paused = await availability(key, wholesaler, IN_STOCK);
        expect(paused.statusCode).toBe(503);
        expect(paused.json()).toMatchObject({ error: 'wholesaler_circuit_open', wholesaler });
      }
      expect(gw.statusChanges).toContainEqual(
        expect.objectContaining({ wholesaler, route, mode, accountId: null, status: 'down' }),
      );
    },
  );
});

describe('sandbox connections per account', () => {
  const LIMIT = 2;
  const SLOW_MS = 1_500;
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    gw = await startGateway({
      database,
      env: { UPSTREAM_MAX_CONCURRENCY: String(LIMIT) },
      mockOptions: { sandbox: { slowAnswerMs: SLOW_MS } },
    });
  });
  afterAll(async () => {
    await gw.close();
    await database.dispose();
  });

  it("lets another account's calls through while one account's slow calls fill its own budget", async () => {
    const slowAccount = gw.keys.test;
    const other = await gw.createKey('test');
    const call = (key: TestKey, pzn: string) =>
      gw.inject({
        url: '/v1/availability',
        body: { wholesaler: 'phoenix', items: [{ pzn, quantity: 1 }] },
        key: key.secret,
      });
    expect((await call(other, IN_STOCK)).statusCode).toBe(200); // connections and JIT warm

    const asked = gw.mocks.sandbox.requestCount('verfuegbarkeitAnfragen');
    const slow = Array.from({ length: LIMIT }, () => call(slowAccount, SCENARIO_PZNS.SLOW_ANSWER.pzn));
    // The slow calls hold their connections: the sandbox has them and keeps the answers.
    await until(
      'the slow calls at the sandbox',
      () => gw.mocks.sandbox.requestCount('verfuegbarkeitAnfragen') >= asked + LIMIT,
      5_000,
      10,
    );
    const started = performance.now();
    const quick = await call(other, IN_STOCK);
    const waitedMs = performance.now() - started;
    expect(quick.statusCode).toBe(200);
    // With one pool of LIMIT connections for the whole sandbox it would wait for a slow answer.
    expect(waitedMs).toBeLessThan(SLOW_MS / 2);
    for (const response of await Promise.all(slow)) expect(response.statusCode).toBe(200);
  });
});
