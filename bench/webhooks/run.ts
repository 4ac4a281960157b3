/**
 * Webhook delivery benchmark (not part of `npm test`): `npm run bench:webhooks`.
 *
 * Per database (SQLite; PostgreSQL too when TEST_DATABASE_URL is set) and run (3 runs, medians reported):
 *  1. throughput: N events (default 20,000; WEBHOOK_BENCH_EVENTS, at most 100,000) are recorded with the
 *     worker stopped, then one worker (the production defaults: concurrency 32, at most 4 in flight per
 *     subscription) delivers them all to a node:http receiver on 127.0.0.1 in a separate process;
 *     deliveries/s = N / time until every delivery is marked delivered in the database. The events are
 *     spread over 8 subscriptions (32 / 4), so the per-subscription cap does not hide the worker's rate.
 *  2. latency: with the worker idle, M events (2,000) are recorded one per transaction at about 500/s,
 *     each followed by the in-process wake; the delay is receiver arrival − commit of the event.
 * Everything stays on 127.0.0.1 and stops by itself. Writes bench/results/webhooks.json.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { createAddressPolicy } from '../../src/lib/address-policy.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/observability/logger.js';
import { createAccount } from '../../src/store/accounts.js';
import { type Database, type Dialect, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { countPendingDeliveries } from '../../src/store/webhook-outbox.js';
import { createWebhookHttpClient } from '../../src/webhooks/delivery/http-client.js';
import { listenForNotifications } from '../../src/webhooks/delivery/pg-listen.js';
import { createWebhookWorker } from '../../src/webhooks/delivery/worker.js';
import { NOTIFY_CHANNEL, recordEvent } from '../../src/webhooks/events/record.js';
import { createSubscription } from '../../src/webhooks/subscriptions/service.js';
import { anyWholesaler, sampleNotice } from '../../src/webhooks/test-support/fixtures.js';
import { writeResults } from '../common/results.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(HERE, '..', 'results', 'webhooks.json');
const EVENTS = Math.min(Number(process.env.WEBHOOK_BENCH_EVENTS ?? 20_000), 100_000);
const LATENCY_EVENTS = 2_000;
const LATENCY_RATE_PER_S = 500;
const RUNS = 3;
const CONCURRENCY = 32;
const PER_SUBSCRIPTION = 4;
const SUBSCRIPTIONS = CONCURRENCY / PER_SUBSCRIPTION;
const BATCH = 500;
const logger = createLogger({ level: 'warn' });

interface RunResult {
  /** 1-minute load average when the run started (other work on the machine skews the figures). */
  load_average: number;
  deliveries_per_second: number;
  record_events_per_second: number;
  delay_p50_ms: number;
  delay_p99_ms: number;
  delay_max_ms: number;
}

async function main(): Promise<void> {
  const receiver = await startReceiver();
  const results: Record<string, unknown> = {};
  try {
    const dialects: Dialect[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
    if (!process.env.TEST_DATABASE_URL)
      console.warn('[bench] TEST_DATABASE_URL is not set: PostgreSQL is skipped.');
    for (const dialect of dialects) {
      const runs: RunResult[] = [];
      for (let run = 1; run <= RUNS; run++) {
        const result = await benchmark(dialect, receiver);
        console.log(`${dialect} run ${run}: ${JSON.stringify(result)}`);
        runs.push(result);
      }
      results[dialect] = { median: medians(runs), runs };
    }
  } finally {
    receiver.child.send({ stop: true });
  }
  const output = {
    benchmark: 'webhook delivery (bench/webhooks/run.ts)',
    command: 'npm run bench:webhooks',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    setup: {
      events: EVENTS,
      latency_events: LATENCY_EVENTS,
      latency_rate_per_second: LATENCY_RATE_PER_S,
      worker_concurrency: CONCURRENCY,
      per_subscription: PER_SUBSCRIPTION,
      subscriptions: SUBSCRIPTIONS,
      receiver: 'node:http on 127.0.0.1 in a separate process, 200 at once',
      runs: RUNS,
    },
    results,
  };
  writeResults(RESULTS, output);
  console.log(JSON.stringify(output.results, null, 2));
}

async function benchmark(dialect: Dialect, receiver: ReceiverProcess): Promise<RunResult> {
  const load = Math.round(loadavg()[0]! * 100) / 100;
  const { database, dispose } = await freshDatabase(dialect);
  const client = createWebhookHttpClient({
    timeoutMs: 10_000,
    connectTimeoutMs: 5_000,
    addressPolicy: createAddressPolicy({ allowPrivateEndpoints: true }),
    connectionsPerOrigin: CONCURRENCY,
  });
  const pool = database.pgPool;
  const newWorker = () =>
    createWebhookWorker(
      {
        db: database.db,
        client,
        clock: systemClock,
        userAgent: 'bench',
        dialect,
        logger,
        listen:
          pool && ((onNotify) => listenForNotifications(pool.options, NOTIFY_CHANNEL, onNotify, logger)),
      },
      { concurrency: CONCURRENCY, perSubscription: PER_SUBSCRIPTION, pollIntervalMs: 1_000, leaseMs: 60_000 },
    );
  try {
    const account = await createAccount(database.db, systemClock, { name: 'bench' });
    const scope = { accountId: account.id, mode: 'test' as const };
    const wholesalers = Array.from({ length: SUBSCRIPTIONS }, (_, i) => `wholesaler-${i}`);
    for (const wholesaler of wholesalers) {
      const deps = {
        db: database.db,
        clock: systemClock,
        addressPolicy: createAddressPolicy({ allowPrivateEndpoints: true }),
        resolveWholesaler: anyWholesaler,
      };
      await createSubscription(deps, scope, {
        url: `http://127.0.0.1:${receiver.port}/hooks`,
        wholesaler,
        events: ['delivery.received'],
      });
    }
    const eventFor = (i: number) => ({
      ...scope,
      type: 'delivery.received' as const,
      wholesaler: wholesalers[i % SUBSCRIPTIONS]!,
      customerId: '4711',
      data: sampleNotice,
    });

    // 1. Throughput.
    const recordStart = performance.now();
    for (let done = 0; done < EVENTS; done += BATCH) {
      await database.db.transaction().execute(async (trx) => {
        for (let i = done; i < Math.min(done + BATCH, EVENTS); i++)
          await recordEvent(trx, eventFor(i), { clock: systemClock });
      });
    }
    const recordSeconds = (performance.now() - recordStart) / 1000;
    // Statistics, as autovacuum keeps them on a live database: without any, PostgreSQL assumes most
    // deliveries are leased and counts leases with a sequential scan instead of the partial index.
    await sql`analyze`.execute(database.db);
    receiver.child.send({ reset: true });
    const reached = receiver.when('reached');
    receiver.child.send({ expect: EVENTS });
    const worker = newWorker();
    const started = performance.now();
    worker.start();
    await reached;
    while ((await countPendingDeliveries(database.db)) > 0) await sleep(5);
    const seconds = (performance.now() - started) / 1000;
    await worker.stop();

    // 2. Delay from commit to arrival, with an idle worker.
    receiver.child.send({ reset: true });
    const idle = newWorker();
    idle.start();
    await sleep(200);
    const committedAt = new Map<string, number>();
    const gapMs = 1000 / LATENCY_RATE_PER_S;
    const paceStart = performance.now();
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const recorded = await recordEvent(database.db, eventFor(i), { clock: systemClock, wake: idle.wake });
      committedAt.set(recorded.event.id, performance.timeOrigin + performance.now());
      const ahead = paceStart + (i + 1) * gapMs - performance.now();
      await sleep(Math.max(0, ahead)); // always yield: SQLite calls resolve without an event-loop turn
    }
    const arrivedAll = receiver.when('reached');
    receiver.child.send({ expect: LATENCY_EVENTS });
    await arrivedAll;
    const report = receiver.when('arrivals');
    receiver.child.send({ report: true });
    const { arrivals } = (await report) as { arrivals: [string, number][] };
    await idle.stop();
    const delays = arrivals.map(([id, at]) => at - committedAt.get(id)!).sort((a, b) => a - b);
    return {
      load_average: load,
      deliveries_per_second: Math.round(EVENTS / seconds),
      record_events_per_second: Math.round(EVENTS / recordSeconds),
      delay_p50_ms: round(percentile(delays, 0.5)),
      delay_p99_ms: round(percentile(delays, 0.99)),
      delay_max_ms: round(delays.at(-1)!),
    };
  } finally {
    await client.close();
    await dispose();
  }
}

async function freshDatabase(dialect: Dialect): Promise<{ database: Database; dispose(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-webhooks-'));
    const database = await openDatabase(`sqlite:${join(folder, 'bench.db')}`);
    await migrateToLatest(database);
    return {
      database,
      async dispose() {
        await database.close();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  const url = process.env.TEST_DATABASE_URL!;
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  await admin(url, `create schema ${schema}`);
  const database = await openDatabase(url, { schema });
  await migrateToLatest(database);
  return {
    database,
    async dispose() {
      await database.close();
      await admin(url, `drop schema ${schema} cascade`);
    },
  };
}

async function admin(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

interface ReceiverProcess {
  child: ChildProcess;
  port: number;
  /** The next message carrying `key`. */
  when(key: string): Promise<Record<string, unknown>>;
}

async function startReceiver(): Promise<ReceiverProcess> {
  const child = fork(join(HERE, 'receiver.ts'), { execArgv: ['--import', 'tsx'] });
  const when = (key: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver: no "${key}" within 300 s`)), 300_000);
      const onMessage = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
    });
  const ready = await when('ready');
  return { child, port: ready.port as number, when };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function medians(runs: RunResult[]): RunResult {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const keys = Object.keys(runs[0]!) as (keyof RunResult)[];
  return Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k]))])) as unknown as RunResult;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
