/**
 * The persistent sandbox's cost per order as a tenant's history grows (not part of `npm test`):
 * `npm run bench:sandbox`.
 *
 * One sandbox wholesaler (the mock, as the gateway runs it in-process) per store: the memory world (the
 * baseline: nothing persisted), SQLite in a temporary folder, and PostgreSQL when TEST_DATABASE_URL is
 * set (a schema of its own, dropped afterwards). Each places ORDERS orders (default 1,000; BENCH_ORDERS,
 * at most 5,000) of two articles for one customer, one at a time over loopback SOAP with the gateway's
 * own client, in blocks of 100. Per block: process CPU (user + system) per order and wall time per
 * order; at the end, the bytes the tenant takes in the database. BENCH_RUNS rounds (default 3) of all
 * stores in turn; medians per block. The ratios that matter: the last block's CPU per order against the
 * first block's in the same store (does a long history cost more?), and against the memory world's last
 * block (what persisting costs). Then the same orders through the gateway as an integrator places them
 * (`through-gateway.ts`: `POST /v1/orders` with a test key, the gateway on SQLite), the gateway
 * process's CPU per order per block. Writes bench/results/sandbox.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { manualClock } from '../../src/lib/clock.js';
import { orderRequest, startSandbox, subOrder } from '../../src/mock/test-support/sandbox.js';
import { memoryWorld, persistentWorld, type WorldStore } from '../../src/mock/world-store.js';
import { bestellen } from '../../src/msv3/operations/bestellen.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { sandboxTenantStore } from '../../src/store/sandbox-state.js';
import { stopAll } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { ordersThroughGateway } from './through-gateway.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(HERE, '..', 'results', 'sandbox.json');
const ORDERS = Math.min(Number(process.env.BENCH_ORDERS ?? 1_000), 5_000);
const BLOCK = 100;
const RUNS = Math.min(Math.max(Number(process.env.BENCH_RUNS ?? 3), 1), 9);
const TENANT = 'bench';
const USERNAME = 'apoBench';

interface Block {
  orders: number;
  cpu_us_per_order: number;
  wall_ms_per_order: number;
}

interface StoreRun {
  blocks: Block[];
  stored_bytes?: number;
}

async function placeOrders(world: WorldStore, orders = ORDERS): Promise<Block[]> {
  // A Tuesday 09:00 in Berlin: day orders, processed at once, each with its delivery notice.
  const clock = manualClock(Date.UTC(2026, 10, 24, 8, 0, 0));
  const sandbox = await startSandbox({ clock, world });
  const blocks: Block[] = [];
  try {
    for (let placed = 0; placed < orders; placed += BLOCK) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < BLOCK; i++) {
        const order = orderRequest(
          subOrder([
            ['04114918', 2],
            ['01234567', 1],
          ]),
        );
        await sandbox.ok(bestellen, order, { tenant: TENANT, username: USERNAME });
        clock.advance(1_000);
      }
      const used = process.cpuUsage(cpu);
      blocks.push({
        orders: placed + BLOCK,
        cpu_us_per_order: round((used.user + used.system) / BLOCK),
        wall_ms_per_order: round((performance.now() - started) / BLOCK, 3),
      });
    }
  } finally {
    await sandbox.close();
  }
  return blocks;
}

async function storedBytes(database: Database): Promise<number> {
  let bytes = 0;
  for (const table of ['sandbox_tenants', 'sandbox_records']) {
    const { rows } = await sql<{ bytes: number | string | null }>`
      select sum(length(document)) as bytes from ${sql.table(table)} where tenant = ${TENANT}`.execute(
      database.db,
    );
    bytes += Number(rows[0]?.bytes ?? 0);
  }
  return bytes;
}

async function onDatabase(url: string, schema?: string): Promise<StoreRun> {
  const database = await openDatabase(url, schema === undefined ? {} : { schema });
  try {
    await migrateToLatest(database);
    const clock = manualClock();
    const blocks = await placeOrders(persistentWorld(sandboxTenantStore(database.db, clock)));
    return { blocks, stored_bytes: await storedBytes(database) };
  } finally {
    await database.close();
  }
}

async function onPostgres(baseUrl: string): Promise<StoreRun> {
  const schema = `bench_sandbox_${process.pid}`;
  const admin = await openDatabase(baseUrl);
  await sql.raw(`create schema ${schema}`).execute(admin.db);
  try {
    return await onDatabase(baseUrl, schema);
  } finally {
    await sql.raw(`drop schema ${schema} cascade`).execute(admin.db);
    await admin.close();
  }
}

function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Per block, the median over the runs of CPU and wall time per order. */
function medianBlocks(runs: StoreRun[]): Block[] {
  return runs[0]!.blocks.map((block, i) => ({
    orders: block.orders,
    cpu_us_per_order: round(median(runs.map((r) => r.blocks[i]!.cpu_us_per_order))),
    wall_ms_per_order: round(median(runs.map((r) => r.blocks[i]!.wall_ms_per_order)), 3),
  }));
}

function summary(blocks: Block[], baseline: Block[], storedBytes?: number) {
  const first = blocks[0]!;
  const last = blocks.at(-1)!;
  return {
    first_block_cpu_us_per_order: first.cpu_us_per_order,
    last_block_cpu_us_per_order: last.cpu_us_per_order,
    last_over_first: round(last.cpu_us_per_order / first.cpu_us_per_order, 2),
    last_over_memory: round(last.cpu_us_per_order / baseline.at(-1)!.cpu_us_per_order, 2),
    ...(storedBytes !== undefined ? { stored_bytes: storedBytes } : {}),
  };
}

async function oneRun(): Promise<Record<string, StoreRun>> {
  const runs: Record<string, StoreRun> = { memory: { blocks: await placeOrders(memoryWorld()) } };
  const folder = mkdtempSync(join(tmpdir(), 'bench-sandbox-'));
  try {
    runs.sqlite = await onDatabase(`sqlite:${join(folder, 'gateway.db')}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  const postgres = process.env.TEST_DATABASE_URL;
  if (postgres !== undefined && postgres !== '') runs.postgres = await onPostgres(postgres);
  runs.gateway = { blocks: await ordersThroughGateway(ORDERS, BLOCK) };
  return runs;
}

async function main(): Promise<void> {
  const load = loadavg()[0]!;
  await placeOrders(memoryWorld(), BLOCK); // warm-up: the first block would carry the JIT's work
  const runs: Record<string, StoreRun>[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await oneRun());
  const stores = Object.keys(runs[0]!);
  const medians = Object.fromEntries(stores.map((name) => [name, medianBlocks(runs.map((r) => r[name]!))]));
  const results = {
    benchmark: 'the persistent sandbox as a tenant places orders (bench/sandbox/run.ts)',
    command: 'npm run bench:sandbox',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    load_average: { start: load, end: loadavg()[0]! },
    setup: { orders: ORDERS, block: BLOCK, articles_per_order: 2, one_customer: true, runs: RUNS },
    summary: Object.fromEntries(
      stores
        .filter((name) => name !== 'memory' && name !== 'gateway')
        .map((name) => [name, summary(medians[name]!, medians.memory!, runs[0]![name]!.stored_bytes)]),
    ),
    through_gateway: {
      first_block_cpu_us_per_order: medians.gateway![0]!.cpu_us_per_order,
      last_block_cpu_us_per_order: medians.gateway!.at(-1)!.cpu_us_per_order,
      last_over_first: round(
        medians.gateway!.at(-1)!.cpu_us_per_order / medians.gateway![0]!.cpu_us_per_order,
        2,
      ),
    },
    median_blocks: medians,
    runs,
  };
  writeResults(RESULTS, results);
  process.stdout.write(
    `${JSON.stringify({ ...results.summary, gateway: results.through_gateway }, null, 2)}\n`,
  );
}

try {
  await main();
} finally {
  stopAll();
}
