/**
 * Overload benchmark (not part of `npm test`): `npm run bench:overload [-- --short | --memory | --only=NAME]`.
 *
 * Many more clients than a slow wholesaler can serve, through one gateway (docs/resilience.md "Overload").
 * One wholesaler (bench/overload/wholesaler.ts, its own process) answers every call after 2 s; one gateway
 * started from `dist/` the way `npm start` starts it, with defaults (UPSTREAM_MAX_CONCURRENCY 16, queue 64,
 * 5 s deadline), SQLite, LOG_LEVEL=info to /dev/null, generous rate limits, a catalogue whose wholesaler
 * `bench` has the slow wholesaler as its live server. Two live keys in two accounts share the clients
 * 80 % / 20 %. Each client sends `POST /v1/availability` (1 article) in a closed loop (bench/overload/
 * clients.ts), on its own keep-alive connection, retrying a refusal at once or after its Retry-After.
 * Scenarios: 2,000 and 5,000 clients, each with both retry policies, BENCH_SECONDS (45) s each after a
 * ramp; a fresh gateway and wholesaler for each.
 *
 * Printed per scenario: 200 answers completed in the window against the capacity (UPSTREAM_MAX_CONCURRENCY
 * × window / call time), goodput %, the wholesaler's mean busy slots (time-weighted, so a window cutting a
 * 2 s call does not count), each account's share, refusals by kind, p50/p99 latency of the 200 answers
 * and of whole calls (first attempt to 200, retries included), the gateway's CPU and peak RSS, the load
 * average.
 * `--short`: the two 2,000-client scenarios, 10 s each, on one gateway (a smoke test, about a minute).
 * `--memory`: 9,980 clients, a 5 s wholesaler, UPSTREAM_MAX_CONCURRENCY and UPSTREAM_MAX_QUEUE 10,000:
 * every call in flight at once; the gateway's peak RSS (VmRSS from /proc) is the figure (budget 512 MB),
 * and per call the wholesaler held at its peak. Three runs: the gateway as `npm start` starts it, then as
 * `npm run start:bounded-memory` does (docs/configuration.md, "Bounded memory"), then the reference, the
 * pass-through of bench/gateway/baseline.ts with `npm start`'s node flags.
 * File descriptors (`ulimit -n`, 20,000 here, not raisable in the container) do not allow 10,000 client and
 * 10,000 wholesaler sockets in one gateway process: the scenario runs 9,980 clients (BENCH_MEMORY_CLIENTS).
 * Everything stays on 127.0.0.1 and stops by itself. Writes bench/results/overload[-short|-memory].json.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { va50Articles } from '../codec/envelopes.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import { CLI, startScriptNodeFlags, stopAll, track, untilListening } from '../common/processes.js';
import { type AccountFigures, percentile, type RetryPolicy, runLoad } from './clients.js';

const ROOT = process.cwd();
const HERE = dirname(fileURLToPath(import.meta.url));
const ARGS = new Set(process.argv.slice(2));
const SHORT = ARGS.has('--short') || process.env.BENCH_SHORT === '1';
const MEMORY = ARGS.has('--memory');
const ONLY = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
const SECONDS = Math.min(Number(process.env.BENCH_SECONDS ?? (SHORT ? 10 : MEMORY ? 15 : 45)), 120);
/** The whole benchmark stops itself after this, whatever happens. */
const WATCHDOG_MS = 20 * 60_000;
const SHARES = [
  { name: 'acct_large', share: 0.8 },
  { name: 'acct_small', share: 0.2 },
];

interface Scenario {
  name: string;
  clients: number;
  retry: RetryPolicy;
  callMs: number;
  env: Record<string, string>;
  /** The package.json script whose node flags start the gateway (`start` unless said). */
  startScript?: string;
  /**
   * Instead of the gateway, bench/gateway/baseline.ts: bare Fastify forwarding with undici, nothing
   * else. What any Node server of that shape pays per call in flight, measured in the same run.
   */
  passThrough?: boolean;
}

const DEFAULT_CONCURRENCY = 16;

function scenarios(): Scenario[] {
  const all = candidates();
  return ONLY === undefined ? all : all.filter((s) => s.name === ONLY || s.name.startsWith(`${ONLY}-as-`));
}

function candidates(): Scenario[] {
  if (MEMORY) {
    const wide = {
      UPSTREAM_MAX_CONCURRENCY: '10000',
      UPSTREAM_MAX_QUEUE: '10000',
      UPSTREAM_MAX_QUEUE_WAIT_MS: '60000',
    };
    // 10,000 client and 10,000 wholesaler sockets need more than 20,000 descriptors in the gateway;
    // `ulimit -n` is 20,000 here (the hard limit: not raisable in the container). 9,980 calls fit.
    const clients = Number(process.env.BENCH_MEMORY_CLIENTS ?? 9_980);
    // As `npm start` runs it, then as `npm run start:bounded-memory` does (docs/configuration.md).
    return [
      { name: `memory-${clients}`, clients, retry: 'retry_after', callMs: 5_000, env: wide },
      {
        name: `memory-${clients}-bounded`,
        clients,
        retry: 'retry_after',
        callMs: 5_000,
        env: wide,
        startScript: 'start:bounded-memory',
      },
      {
        name: `memory-${clients}-passthrough`,
        clients,
        retry: 'retry_after',
        callMs: 5_000,
        env: wide,
        passThrough: true,
      },
    ];
  }
  const all: Scenario[] = [
    { name: '2000-at-once', clients: 2_000, retry: 'at_once', callMs: 2_000, env: {} },
    { name: '2000-retry-after', clients: 2_000, retry: 'retry_after', callMs: 2_000, env: {} },
    { name: '5000-retry-after', clients: 5_000, retry: 'retry_after', callMs: 2_000, env: {} },
    { name: '5000-at-once', clients: 5_000, retry: 'at_once', callMs: 2_000, env: {} },
  ];
  const chosen = SHORT ? all.filter((s) => s.clients === 2_000) : all;
  // --clients=N: the chosen scenarios with N clients (a quick look, e.g. 16: no overload at all).
  const clients = process.argv.find((arg) => arg.startsWith('--clients='))?.slice('--clients='.length);
  return clients === undefined
    ? chosen
    : chosen.map((s) => ({ ...s, name: `${s.name}-as-${clients}`, clients: Number(clients) }));
}

let running:
  | {
      wholesaler: { child: ChildProcess; port: number };
      gateway: { child: ChildProcess; url: string; keys: string[] };
    }
  | undefined;

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-overload-'));
  const watchdog = setTimeout(() => {
    console.error(`[bench] watchdog: still running after ${WATCHDOG_MS / 60_000} min; stopping`);
    stopAll();
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  const article = va50Articles()[0]!;
  const body = JSON.stringify({
    wholesaler: 'bench',
    items: [{ pzn: article.pzn.padStart(8, '0'), quantity: 1 }],
  });
  const rows: Record<string, unknown>[] = [];
  try {
    for (const scenario of scenarios()) {
      const row = await runScenario(folder, scenario, body);
      rows.push(row);
    }
    const output = {
      benchmark:
        'Overload: far more clients than a slow wholesaler serves, through one gateway (bench/overload/run.ts)',
      command: `npm run bench:overload${SHORT ? ' -- --short' : MEMORY ? ' -- --memory' : ''}`,
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
      setup: {
        gateway: `node ${startScriptNodeFlags().join(' ')} dist/cli.js serve, own process; SQLite; live keys in two accounts; RATE_LIMIT_LIVE_POINTS=10000000; LOG_LEVEL=info to /dev/null; defaults otherwise unless the scenario says`,
        wholesaler:
          'bench/overload/wholesaler.ts: node:http on 127.0.0.1, canned 50-article v2 answer after a fixed delay',
        clients: `bench/overload/clients.ts in the runner's process: closed loop, one keep-alive socket per client (undici Pool), ${SHARES.map((s) => `${s.name} ${s.share * 100} %`).join(' / ')} of the clients; retry at once, or after Retry-After + U(0, 1 s)`,
        window: `${SECONDS} s after a ramp (clients started evenly, 500 new connections a second)`,
        note: 'runner, gateway and wholesaler share the machine; load_average shows what else ran',
      },
      scenarios: rows,
    };
    const results = join(
      ROOT,
      'bench',
      'results',
      `overload${SHORT ? '-short' : MEMORY ? '-memory' : ''}${ONLY ? `-${ONLY}` : ''}.json`,
    );
    mkdirSync(dirname(results), { recursive: true });
    writeFileSync(results, `${JSON.stringify(output, null, 2)}\n`);
    console.log(`[bench] wrote ${results}`);
  } finally {
    clearTimeout(watchdog);
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function runScenario(
  folder: string,
  scenario: Scenario,
  body: string,
): Promise<Record<string, unknown>> {
  // --short: the scenarios share one wholesaler and gateway (started once: the smoke test stays short).
  const reused = SHORT ? running : undefined;
  const wholesaler = reused?.wholesaler ?? (await startWholesaler(scenario.callMs));
  const wholesalerBase = `http://127.0.0.1:${wholesaler.port}/msv3/v2.0`;
  const gateway =
    reused?.gateway ??
    (scenario.passThrough
      ? await startPassThrough(scenario, wholesalerBase)
      : await startGateway(folder, scenario, wholesalerBase));
  if (SHORT) running = { wholesaler, gateway };
  const pid = gateway.child.pid!;
  // One call first: connections, JIT and the mean call time are warm, as in a running gateway.
  const first = await fetch(`${gateway.url}/v1/availability`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': gateway.keys[0]!,
      'x-msv3-username': 'bench1',
      'x-msv3-password': 'geheim',
    },
    body,
  });
  if (first.status !== 200)
    throw new Error(`${scenario.name}: first call answered ${first.status} ${await first.text()}`);
  const concurrency = Number(scenario.env.UPSTREAM_MAX_CONCURRENCY ?? DEFAULT_CONCURRENCY);
  const loadAverage = round(loadavg()[0]!, 2);
  let peakRssKb = 0;
  let cpuBefore: number | null = null;
  let cpuAfter: number | null = null;
  let reported: Promise<WholesalerReport> | undefined;
  let heapAtPeak: Record<string, number> | null = null;
  // prom-client resets its event-loop histogram at each scrape: every scrape's figures are kept.
  const lagReads: { mean: number; p99: number }[] = [];
  let sampling = false;
  const sampler = setInterval(() => {
    const rss = rssKb(pid) ?? 0;
    if (rss <= peakRssKb) return;
    peakRssKb = rss;
    // Where the memory is at the new peak (at most one /metrics request at a time).
    if (sampling) return;
    sampling = true;
    void scrapeMetrics(gateway.url)
      .then((scraped) => {
        if (scraped === null) return;
        heapAtPeak = { rss_mb: round(rss / 1024, 1), ...scraped.heap };
        lagReads.push(scraped.lag);
      })
      .finally(() => {
        sampling = false;
      });
  }, 200);
  // The gateway's responsiveness under the load: GET /v1/health every 250 ms on a connection of its own.
  const healthMs: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const started = performance.now();
      try {
        await (await fetch(`${gateway.url}/v1/health`)).arrayBuffer();
        healthMs.push(performance.now() - started);
      } catch {}
      await sleep(250);
    }
  })();
  console.log(
    `[bench] ${scenario.name}: ${scenario.clients} clients, ${scenario.retry}, ${SECONDS} s, load ${loadAverage}`,
  );
  const accounts = SHARES.map((share, i) => ({
    name: share.name,
    key: gateway.keys[i]!,
    clients: Math.round(scenario.clients * share.share),
  }));
  const figures = await runLoad({
    url: gateway.url,
    accounts,
    body,
    retry: scenario.retry,
    durationMs: SECONDS * 1000,
    rampMs: rampMs(scenario),
    onStarted: () => {
      wholesaler.child.send({ window: 'start' });
      cpuBefore = cpuMs(pid);
      if (process.env.BENCH_HEAP_SNAPSHOT_DIR !== undefined)
        setTimeout(() => process.kill(pid, 'SIGUSR2'), 10_000).unref();
    },
    onEnded: () => {
      reported = wholesalerReport(wholesaler.child);
      cpuAfter = cpuMs(pid);
    },
  });
  const report = await reported!;
  probing = false;
  await prober;
  const last = await scrapeMetrics(gateway.url);
  if (last !== null) lagReads.push(last.lag);
  const lag = lagSummary(lagReads);
  clearInterval(sampler);
  peakRssKb = Math.max(peakRssKb, rssKb(pid) ?? 0);
  if (!SHORT) {
    await stopChild(gateway.child);
    wholesaler.child.send({ stop: true });
  }

  const capacity = (concurrency * SECONDS * 1000) / scenario.callMs;
  const successes = sum(figures.map((f) => f.successes));
  const all = (pick: (f: AccountFigures) => number[]) => figures.flatMap(pick);
  const refusals = merge(figures.map((f) => f.refusals));
  const failures = merge(figures.map((f) => f.failures));
  const row = {
    scenario: scenario.name,
    gateway_node_flags: gatewayFlags(scenario).join(' '),
    clients: scenario.clients,
    retry: scenario.retry,
    call_ms: scenario.callMs,
    concurrency,
    window_s: SECONDS,
    load_average_at_start: loadAverage,
    load_average_at_end: round(loadavg()[0]!, 2),
    capacity: Math.round(capacity),
    successes,
    goodput_percent: round((100 * successes) / capacity, 1),
    wholesaler_mean_busy_slots: round(report.meanHolding, 2),
    wholesaler_busy_percent: round((100 * report.meanHolding) / concurrency, 1),
    wholesaler_peak_in_flight: report.peakHolding,
    wholesaler_mean_gap_ms: report.meanGapMs === null ? null : Math.round(report.meanGapMs),
    accounts: figures.map((f) => ({
      account: f.name,
      clients: f.clients,
      successes: f.successes,
      share_percent: successes === 0 ? 0 : round((100 * f.successes) / successes, 1),
      refusals: sum(Object.values(f.refusals)),
      call_p50_ms: Math.round(percentile(f.callTimes, 50)),
    })),
    refusals,
    refusals_total: sum(Object.values(refusals)),
    failures,
    retry_after_seen: merge(figures.map((f) => f.retryAfter)),
    latency_200_ms: {
      p50: Math.round(
        percentile(
          all((f) => f.latencies),
          50,
        ),
      ),
      p99: Math.round(
        percentile(
          all((f) => f.latencies),
          99,
        ),
      ),
    },
    call_ms_first_attempt_to_200: {
      p50: Math.round(
        percentile(
          all((f) => f.callTimes),
          50,
        ),
      ),
      p99: Math.round(
        percentile(
          all((f) => f.callTimes),
          99,
        ),
      ),
    },
    gateway_cpu_percent:
      cpuBefore === null || cpuAfter === null
        ? null
        : round((100 * (cpuAfter - cpuBefore)) / (SECONDS * 1000), 1),
    gateway_peak_rss_mb: round(peakRssKb / 1024, 1),
    // Per call the wholesaler held at its peak: both sockets of a call and its share of everything else.
    gateway_peak_rss_kb_per_call_in_flight:
      report.peakHolding === 0 ? null : Math.round(peakRssKb / report.peakHolding),
    gateway_memory_near_peak_mb: heapAtPeak,
    // Mean of the /metrics scrapes during the run and their worst p99 (null for the pass-through).
    gateway_event_loop_lag_ms: lag,
    health_ms: { p50: Math.round(percentile(healthMs, 50)), p99: Math.round(percentile(healthMs, 99)) },
  };
  console.log(
    `[bench] ${scenario.name}: ${successes} / ${Math.round(capacity)} (${row.goodput_percent} %), wholesaler busy ${row.wholesaler_busy_percent} % (gap ${row.wholesaler_mean_gap_ms} ms), ` +
      `shares ${row.accounts.map((a) => `${a.account} ${a.share_percent} %`).join(' / ')}, refusals ${row.refusals_total} ${JSON.stringify(refusals)}, ` +
      `failures ${JSON.stringify(failures)}, p50/p99 ${row.latency_200_ms.p50}/${row.latency_200_ms.p99} ms, ` +
      `call p50/p99 ${row.call_ms_first_attempt_to_200.p50}/${row.call_ms_first_attempt_to_200.p99} ms, ` +
      `CPU ${row.gateway_cpu_percent} %, loop lag mean/p99 ${lag?.mean}/${lag?.p99} ms, health p50/p99 ${row.health_ms.p50}/${row.health_ms.p99} ms, RSS ${row.gateway_peak_rss_mb} MB, load ${loadAverage}→${row.load_average_at_end}`,
  );
  return row;
}

async function startWholesaler(callMs: number): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(join(HERE, 'wholesaler.ts'), [String(callMs)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  track(child);
  return { child, port: await readyPort(child, 'wholesaler') };
}

/** The port a forked server reports over IPC once it listens (`{port}`, with or without `ready`). */
function readyPort(child: ChildProcess, name: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: not ready within 60 s`)), 60_000);
    const onMessage = (message: { port?: number }) => {
      if (message.port === undefined) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message.port);
    };
    child.on('message', onMessage);
  });
}

interface WholesalerReport {
  answered: number;
  peakHolding: number;
  meanHolding: number;
  meanGapMs: number | null;
}

function wholesalerReport(child: ChildProcess): Promise<WholesalerReport> {
  return new Promise((resolve) => {
    const onMessage = (message: { report?: WholesalerReport }) => {
      if (message.report === undefined) return;
      child.off('message', onMessage);
      resolve(message.report);
    };
    child.on('message', onMessage);
    child.send({ report: true });
  });
}

async function startGateway(
  folder: string,
  scenario: Scenario,
  wholesalerBase: string,
): Promise<{ child: ChildProcess; url: string; keys: string[] }> {
  const env = benchGatewayEnv({
    folder,
    upstream: { baseUrl: wholesalerBase, name: 'Slow wholesaler' },
    databaseFile: `gateway-${scenario.name}.db`,
    settings: {
      CREATE_FIRST_KEY: 'false',
      RATE_LIMIT_LIVE_POINTS: '10000000',
      // BENCH_REFUSAL_HOLD_MS: the gateway's UPSTREAM_REFUSAL_HOLD_MS (default: the gateway's default).
      ...(process.env.BENCH_REFUSAL_HOLD_MS === undefined
        ? {}
        : { UPSTREAM_REFUSAL_HOLD_MS: process.env.BENCH_REFUSAL_HOLD_MS }),
      ...scenario.env,
    },
  });
  const keys = SHARES.map((share) => createLiveKey(env, share.name));
  // BENCH_CPU_PROFILE_DIR: write a V8 CPU profile of the gateway there (node --cpu-prof).
  const profile = process.env.BENCH_CPU_PROFILE_DIR;
  const logTo = process.env.BENCH_GATEWAY_LOG;
  const profiling = profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`];
  // BENCH_HEAP_SNAPSHOT_DIR: one heap snapshot of the gateway there, 10 s into the window.
  const snapshots = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  if (snapshots !== undefined)
    profiling.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`);
  const child = spawn(process.execPath, [...gatewayFlags(scenario), ...profiling, CLI, 'serve'], {
    env,
    // BENCH_GATEWAY_LOG: the gateway's log lines to that file instead of /dev/null.
    stdio: ['ignore', logTo === undefined ? 'ignore' : openSync(logTo, 'a'), 'pipe'],
  });
  track(child);
  const url = await untilListening(child, 'gateway', 120_000);
  return { child, url, keys };
}

/** bench/gateway/baseline.ts with the start script's node flags, as many wholesaler connections as the gateway may use. */
async function startPassThrough(
  scenario: Scenario,
  wholesalerBase: string,
): Promise<{ child: ChildProcess; url: string; keys: string[] }> {
  const connections = scenario.env.UPSTREAM_MAX_CONCURRENCY ?? String(DEFAULT_CONCURRENCY);
  const child = fork(
    join(ROOT, 'bench', 'gateway', 'baseline.ts'),
    [`${wholesalerBase}/verfuegbarkeitAnfragen`, connections],
    {
      execArgv: [...gatewayFlags(scenario), '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  track(child);
  const port = await readyPort(child, 'pass-through');
  // It checks no keys; the clients send them all the same.
  return { child, url: `http://127.0.0.1:${port}`, keys: SHARES.map((share) => `unused_${share.name}`) };
}

/**
 * The gateway's node flags: those of the scenario's start script, or BENCH_GATEWAY_NODE_FLAGS instead
 * (a memory experiment: `BENCH_GATEWAY_NODE_FLAGS="--max-old-space-size=256"`).
 */
function gatewayFlags(scenario: Scenario): string[] {
  return (
    process.env.BENCH_GATEWAY_NODE_FLAGS?.split(' ').filter(Boolean) ??
    startScriptNodeFlags(scenario.startScript)
  );
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
}

/**
 * The gateway's V8 heap and external memory (MB) and its event-loop lag since the previous scrape (ms),
 * from prom-client's default metrics on /metrics; null where there is no /metrics (the pass-through).
 */
async function scrapeMetrics(
  url: string,
): Promise<{ heap: Record<string, number>; lag: { mean: number; p99: number } } | null> {
  try {
    const response = await fetch(`${url}/metrics`);
    const text = await response.text();
    if (response.status !== 200) return null;
    const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    const mb = (name: string) => round(read(name) / 2 ** 20, 1);
    return {
      heap: {
        heap_used_mb: mb('nodejs_heap_size_used_bytes'),
        heap_total_mb: mb('nodejs_heap_size_total_bytes'),
        external_mb: mb('nodejs_external_memory_bytes'),
      },
      lag: {
        mean: read('nodejs_eventloop_lag_mean_seconds') * 1000,
        p99: read('nodejs_eventloop_lag_p99_seconds') * 1000,
      },
    };
  } catch {
    return null;
  }
}

/** The mean of the scrapes' means and the worst p99; a scrape too soon after another has no samples. */
function lagSummary(reads: { mean: number; p99: number }[]): { mean: number; p99: number } | null {
  const usable = reads.filter((r) => Number.isFinite(r.mean) && Number.isFinite(r.p99));
  if (usable.length === 0) return null;
  return {
    mean: round(sum(usable.map((r) => r.mean)) / usable.length, 1),
    p99: round(Math.max(...usable.map((r) => r.p99)), 1),
  };
}

/** VmRSS of a process in kB; null without /proc. (prlimit execs node: same pid.) */
function rssKb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** User + system CPU time of a process, ms; null without /proc. */
function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/** Clients start evenly over this: 500 new connections a second, which the listen backlogs absorb. */
function rampMs(scenario: Scenario): number {
  return Math.max(2_000, (scenario.clients / 500) * 1000);
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function merge(records: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const record of records)
    for (const [key, value] of Object.entries(record)) out[key] = (out[key] ?? 0) + value;
  return out;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

main().catch((error: unknown) => {
  console.error(error);
  stopAll();
  process.exit(1);
});
