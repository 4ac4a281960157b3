/**
 * Scale-out benchmark (not part of `npm test`): `npm run bench:cluster`, described in docs/scale-out.md.
 *
 * Three `msv3-gateway serve` processes on one scratch PostgreSQL database and one private Redis
 * (RATE_LIMIT_STORE=redis), one sandbox mock wholesaler (SANDBOX_URL) and a round-robin proxy, all on
 * 127.0.0.1. A bounded mixed load runs through the proxy while one process is SIGKILLed and restarted;
 * then the orders, webhooks and the shared rate limit are checked. Exits 1 if an invariant fails.
 * Writes bench/results/cluster.json. Everything it starts is stopped again, also on failure or signal.
 */
import type { ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../src/lib/clock.js';
import { type MockWholesaler, startMockWholesaler } from '../../src/mock/index.js';
import { gatewayOrderId } from '../../src/services/orders/ids.js';
import { createAccount } from '../../src/store/accounts.js';
import { createApiKey } from '../../src/store/api-keys.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { sandboxTenant } from '../../src/wholesalers/registry.js';
import { type GatewayProcess, killAndWait, startGatewayProcess } from '../../test/gateway-process.js';
import { writeResults } from '../common/results.js';
import {
  createScratchDatabase,
  type OwnRedis,
  type ScratchDatabase,
  startOwnRedis,
  startWebhookReceiver,
  type WebhookReceiver,
} from './infra.js';
import {
  type Check,
  checkOrders,
  checkRateLimit,
  checkWebhooks,
  type KeyOutcome,
  summariseWebhooks,
} from './invariants.js';
import {
  CREDENTIALS,
  call,
  newRecorder,
  percentile,
  placeOrder,
  replayKeys,
  runClient,
  SLOW_ORDER,
} from './load.js';
import { type ClusterProxy, startClusterProxy } from './proxy.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(HERE, '..', 'results', 'cluster.json');
const PROCESSES = 3;
const LOAD_SECONDS = Math.min(Math.max(Number(process.env.CLUSTER_BENCH_SECONDS ?? 90), 20), 120);
const CLIENTS = Math.min(Math.max(Number(process.env.CLUSTER_BENCH_CLIENTS ?? 8), 1), 32);
const KILL_AT_MS = Math.round(LOAD_SECONDS * 200); // a fifth into the load
const RESTART_AFTER_MS = 5_000;
const ORDER_GIVE_UP_MS = 90_000;
const START_TIMEOUT_MS = 240_000;
/** Small enough that this 2-core machine's few dozen requests/s exceed it (see docs/scale-out.md). */
const RATE_POINTS = 25;
const RATE_WINDOW_SECONDS = 10;
const RATE_PHASE_MS = 15_000;
/** The load is extended until the restarted process served this long, at most by LOAD_EXTENSION_MS. */
const SERVE_AFTER_RESTART_MS = 15_000;
const LOAD_EXTENSION_MS = 180_000;
const RATE_CONCURRENCY = 16;
const RATE_TOLERANCE = 0;
const WEBHOOK_DRAIN_MS = 120_000;

const cleanups: Array<() => Promise<unknown>> = [];
async function cleanUp(): Promise<void> {
  for (const step of cleanups.splice(0).reverse()) await step().catch((e) => console.error('[cleanup]', e));
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`[bench] ${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const loadAtStart = loadavg()[0]!;
  const children: ChildProcess[] = [];
  cleanups.push(async () => Promise.all(children.map(killAndWait)));

  const scratch: ScratchDatabase = await createScratchDatabase();
  cleanups.push(() => scratch.drop());
  const redis: OwnRedis = await startOwnRedis();
  cleanups.push(() => redis.stop());
  const mock: MockWholesaler = await startMockWholesaler({ slowAnswerMs: 3_000 });
  cleanups.push(() => mock.close());
  const receiver: WebhookReceiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());

  // Migrated and keyed before the processes start, so no start-up races another's migrations.
  const database: Database = await openDatabase(scratch.url, { maxConnections: 2 });
  cleanups.push(() => database.close());
  await migrateToLatest(database);
  const account = await createAccount(database.db, systemClock, { name: 'Bench cluster' });
  const newKey = async (name: string) =>
    (await createApiKey(database.db, systemClock, { accountId: account.id, name, mode: 'test' })).secret;
  const clientKeys: string[] = [];
  for (let i = 0; i < CLIENTS; i++) clientKeys.push(await newKey(`client-${i}`));
  const rateKey = await newKey('rate-limit-phase');

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: scratch.url,
    REDIS_URL: redis.url,
    RATE_LIMIT_STORE: 'redis',
    RATE_LIMIT_TEST_POINTS: String(RATE_POINTS),
    RATE_LIMIT_TEST_WINDOW_SECONDS: String(RATE_WINDOW_SECONDS),
    SANDBOX_URL: mock.url,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    CREATE_FIRST_KEY: 'false',
    ALLOW_PRIVATE_ENDPOINTS: 'true',
    WHOLESALER_PROBE_INTERVAL_MS: '0',
    IDEMPOTENCY_LOCK_TIMEOUT_MS: '10000',
    WEBHOOK_POLL_INTERVAL_MS: '200',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_MS: '5000',
    SHUTDOWN_TIMEOUT_MS: '500',
  };
  console.log(`[bench] starting ${PROCESSES} gateway processes (load average ${loadAtStart.toFixed(2)})`);
  // One after the other: on a busy machine three parallel starts (tsx compiling) time out together.
  const gateways: GatewayProcess[] = [];
  for (let i = 0; i < PROCESSES; i++)
    gateways.push(await startGatewayProcess(env, children, START_TIMEOUT_MS));
  const proxy: ClusterProxy = await startClusterProxy(gateways.map((g) => g.url));
  cleanups.push(() => proxy.close());

  const created = await call(proxy.url, undefined, 'subscribe', {
    method: 'POST',
    path: '/v1/webhooks',
    apiKey: clientKeys[0]!,
    body: { url: receiver.url, wholesaler: 'phoenix', events: ['order.status_changed', 'delivery.received'] },
  });
  if (created.status !== 201) throw new Error(`subscription not created: ${JSON.stringify(created)}`);
  const subscriptionId = String(created.json?.id);

  // Phase 1: mixed load; one process SIGKILLed a fifth in and restarted with the same env.
  console.log(`[bench] load: ${CLIENTS} clients for ${LOAD_SECONDS} s through ${proxy.url}`);
  const recorder = newRecorder();
  const loadStart = Date.now();
  let endAt = loadStart + LOAD_SECONDS * 1000;
  const clients = Promise.all(
    clientKeys.map((key, i) => runClient(proxy.url, recorder, key, i, () => endAt, ORDER_GIVE_UP_MS)),
  );
  const victim = 1;
  let crashOrder: Promise<KeyOutcome> | undefined;
  const fault = (async () => {
    await sleep(KILL_AT_MS);
    // An order sent straight to the victim, whose answer the mock holds back: it is in flight (its
    // bestellen possibly at the wholesaler) when the process dies; the client retries with the same key.
    crashOrder = placeOrder(proxy.url, recorder, clientKeys[0]!, 'bench-0-crash', ORDER_GIVE_UP_MS, {
      body: SLOW_ORDER,
      firstBase: gateways[victim]!.url,
    });
    await sleep(1_500);
    const killedAt = Date.now() - loadStart;
    await killAndWait(gateways[victim]!.child);
    console.log(`[bench] SIGKILLed gateway ${victim} at ${killedAt} ms`);
    await sleep(RESTART_AFTER_MS);
    const restarted = await startGatewayProcess(env, children, START_TIMEOUT_MS);
    gateways[victim] = restarted;
    proxy.backends[victim] = { url: restarted.url, down: false };
    const back = Date.now() - loadStart;
    endAt = Math.min(
      Math.max(endAt, Date.now() + SERVE_AFTER_RESTART_MS),
      loadStart + LOAD_SECONDS * 1000 + LOAD_EXTENSION_MS,
    );
    console.log(`[bench] gateway ${victim} restarted, serving again at ${back} ms`);
    return { killed_at_ms: killedAt, restarted_at_ms: back };
  })();
  const [results, faultTimes] = await Promise.all([clients, fault]);
  const loadMs = Date.now() - loadStart;
  const outcomes = results.flatMap((r) => r.outcomes);
  if (crashOrder !== undefined) outcomes.push(await crashOrder);

  console.log('[bench] replaying every acknowledged key once');
  const keyOf = (o: { key: string }) => clientKeys[Number(o.key.split('-')[1])]!;
  await replayKeys(proxy.url, recorder, keyOf, outcomes, 4);

  // Webhooks: wait (bounded) until every delivery row of the subscription is delivered.
  console.log('[bench] waiting for webhook deliveries');
  const deliveries = () =>
    database.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'status'])
      .where('subscription_id', '=', subscriptionId)
      .execute();
  const drainUntil = Date.now() + WEBHOOK_DRAIN_MS;
  let rows = await deliveries();
  while (rows.some((r) => r.status !== 'delivered') && Date.now() < drainUntil) {
    await sleep(500);
    rows = await deliveries();
  }
  const eventRows = await database.db.selectFrom('webhook_events').select('id').execute();

  // Phase 2: one key hammered round-robin through all three processes.
  console.log(`[bench] rate limit: ${RATE_POINTS} per ${RATE_WINDOW_SECONDS} s, ${RATE_PHASE_MS} ms`);
  const rate = { allowed: 0, limited: 0, other: 0, first: 0, last: 0, allowed_per_process: [0, 0, 0] };
  const rateEnd = Date.now() + RATE_PHASE_MS;
  rate.first = Date.now();
  await Promise.all(
    Array.from({ length: RATE_CONCURRENCY }, async () => {
      while (Date.now() < rateEnd) {
        const answer = await call(proxy.url, undefined, 'rate', {
          method: 'GET',
          path: '/v1/wholesalers',
          apiKey: rateKey,
        });
        rate.last = Date.now();
        if (answer.status === 200) {
          rate.allowed += 1;
          rate.allowed_per_process[answer.backend ?? 0]! += 1;
        } else if (answer.status === 429) rate.limited += 1;
        else rate.other += 1;
      }
    }),
  );

  // Orders at the wholesaler: every Bestellung Id it holds, as the gateway order id it maps to.
  const tenant = sandboxTenant(account.id, 'phoenix');
  const mockOrders = mock.orders(tenant, CREDENTIALS['x-msv3-username']);
  const placed = mock.placedOrderCount();
  const wholesalerOrderIds = mockOrders.map((o) => gatewayOrderId(o.id));
  if (placed !== mockOrders.length)
    console.warn(`[bench] the mock holds ${placed} orders, ${mockOrders.length} in the bench tenant`);

  const checks: Check[] = [
    ...checkOrders({ keys: outcomes, wholesalerOrderIds, bestellenCalls: mock.requestCount('bestellen') }),
    {
      name: 'orders: the wholesaler holds no order outside the bench tenant',
      ok: placed === mockOrders.length,
      detail: `${placed} placed in all, ${mockOrders.length} in the tenant`,
    },
    ...checkWebhooks({ sentEventIds: rows.map((r) => r.event_id), receivedIds: receiver.receivedIds }),
    ...checkRateLimit({
      points: RATE_POINTS,
      windowSeconds: RATE_WINDOW_SECONDS,
      durationMs: rate.last - rate.first,
      allowed: rate.allowed,
      limited: rate.limited,
      other: rate.other,
      tolerance: RATE_TOLERANCE,
    }),
  ];

  const requests = [...recorder.kinds.entries()].map(([key, count]) => {
    const [operation, kind] = key.split('\t') as [string, string];
    return { operation, kind, count };
  });
  requests.sort((a, b) => a.operation.localeCompare(b.operation) || b.count - a.count);
  const total = requests.reduce((n, r) => n + r.count, 0);
  const operations = [...recorder.latencies.entries()].map(([operation, list]) => ({
    operation,
    count: list.length,
    p50_ms: Math.round(percentile(list, 50)),
    p99_ms: Math.round(percentile(list, 99)),
  }));
  const acknowledged = outcomes.filter((o) => o.acknowledgedOrderIds.length > 0).length;
  const output = {
    date: startedAt.toISOString(),
    command: 'npm run bench:cluster',
    machine: { cpus: cpus().length, load_average_at_start: loadAtStart, load_average_at_end: loadavg()[0] },
    setup: {
      processes: PROCESSES,
      clients: CLIENTS,
      load_seconds: LOAD_SECONDS,
      rate_limit: `${RATE_POINTS} per ${RATE_WINDOW_SECONDS} s (redis)`,
    },
    fault: { process: victim, ...faultTimes },
    requests: { total, per_second: Math.round((total / loadMs) * 1000), by_kind: requests, operations },
    proxy: { reroutes_after_refused_connection: proxy.reroutes() },
    orders: {
      keys: outcomes.length,
      acknowledged,
      unresolved: outcomes.filter((o) => o.unresolved).length,
      at_wholesaler: mockOrders.length,
      bestellen_calls: mock.requestCount('bestellen'),
    },
    webhooks: {
      ...summariseWebhooks({ sentEventIds: rows.map((r) => r.event_id), receivedIds: receiver.receivedIds }),
      events_recorded: eventRows.length,
    },
    rate_limit: { ...rate, duration_ms: rate.last - rate.first },
    checks,
    ok: checks.every((c) => c.ok),
  };

  console.log('\nrequests (operation, answer, count):');
  console.table(requests);
  console.table(operations);
  console.log(`orders: ${JSON.stringify(output.orders)}`);
  console.log(`webhooks: ${JSON.stringify(output.webhooks)}`);
  console.log(`rate limit: ${JSON.stringify(output.rate_limit)}`);
  console.table(checks.map((c) => ({ check: c.name, ok: c.ok ? 'PASS' : 'FAIL', detail: c.detail })));
  writeResults(RESULTS, output);
  console.log(`[bench] wrote ${RESULTS}`);
  return output.ok ? 0 : 1;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  console.error('[bench] failed:', error);
} finally {
  await cleanUp();
}
process.exit(exitCode);
