/**
 * Overload benchmark (not part of `npm test`): `npm run bench:overload [-- --short | --memory [--sustained] | --only=NAME]`.
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
 * `--memory`: 9,980 clients, a 5 s wholesaler, UPSTREAM_MAX_CONCURRENCY and UPSTREAM_MAX_QUEUE 10,000.
 * Every client connects first, then all send one call at once, three times (waves: bench/overload/
 * clients.ts `runWaves`), so every call is in flight at one time; the gateway's peak RSS (VmRSS from
 * /proc) is the figure (budget 512 MB), and per call the wholesaler held at its peak; goodput is the
 * share of calls answered 200. Three servers, each fresh: the gateway as `npm start` starts it, as
 * `npm run start:bounded-memory` does (docs/configuration.md, "Bounded memory"), and the reference, the
 * pass-through of bench/gateway/baseline.ts with `npm start`'s node flags. `--memory --sustained`: the
 * same three in the closed loop instead (BENCH_SECONDS, 15 s): memory while 2,000 calls a second are
 * turned around, which two shared cores cannot keep up with, so fewer calls are in flight.
 * File descriptors (`ulimit -n`, 20,000 here, not raisable in the container) do not allow 10,000 client and
 * 10,000 wholesaler sockets in one gateway process: the scenario runs 9,980 clients (BENCH_MEMORY_CLIENTS).
 * Everything stays on 127.0.0.1 and stops by itself. Writes bench/results/overload[-short|-memory[-sustained]].json.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { va50Articles } from '../codec/envelopes.js';
import { CLI, startScriptNodeFlags, startWatchdog, stopAll } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { type AccountFigures, percentile, type RetryPolicy, runLoad, runWaves } from './clients.js';
import { cpuMs, gatewayFigures, lagText, merge, round, sum, watchGateway } from './measure.js';
import {
  DEFAULT_CONCURRENCY,
  gatewayFlags,
  type RunningGateway,
  type ServerSetup,
  SHARES,
  startGateway,
  startPassThrough,
  startWholesaler,
  stopChild,
  type WholesalerReport,
  wholesalerReport,
} from './servers.js';

const ROOT = process.cwd();
const ARGS = new Set(process.argv.slice(2));
const SHORT = ARGS.has('--short') || process.env.BENCH_SHORT === '1';
const MEMORY = ARGS.has('--memory');
const SUSTAINED = ARGS.has('--sustained');
/** `--memory` without `--sustained`: waves of calls instead of the closed loop. */
const WAVES = MEMORY && !SUSTAINED;
const ONLY = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
const SECONDS = Math.min(Number(process.env.BENCH_SECONDS ?? (SHORT ? 10 : MEMORY ? 15 : 45)), 120);
/** The whole benchmark stops itself after this, whatever happens. */
const WATCHDOG_MS = 20 * 60_000;
interface Scenario extends ServerSetup {
  clients: number;
  retry: RetryPolicy;
  callMs: number;
  /** Waves of calls (bench/overload/clients.ts `runWaves`) instead of the closed loop. */
  waves?: number;
}

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
    // As `npm start` runs it, as `npm run start:bounded-memory` does (docs/configuration.md), and the
    // pass-through reference; in waves of calls, or (--sustained) in the closed loop.
    const servers: Pick<Scenario, 'startScript' | 'passThrough'>[] = [
      {},
      { startScript: 'start:bounded-memory' },
      { passThrough: true },
    ];
    const suffix = (server: Pick<Scenario, 'startScript' | 'passThrough'>) =>
      server.passThrough ? '-passthrough' : server.startScript ? '-bounded' : '';
    const common = { clients, retry: 'retry_after' as const, callMs: 5_000, env: wide };
    return servers.map((server) =>
      WAVES
        ? { name: `waves-${clients}${suffix(server)}`, waves: 3, ...common, ...server }
        : { name: `memory-${clients}${suffix(server)}`, ...common, ...server },
    );
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
      gateway: RunningGateway;
    }
  | undefined;

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-overload-'));
  const stopWatchdog = startWatchdog(WATCHDOG_MS);
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
      command: `npm run bench:overload${SHORT ? ' -- --short' : MEMORY ? ` -- --memory${SUSTAINED ? ' --sustained' : ''}` : ''}`,
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
      setup: {
        gateway: `node ${startScriptNodeFlags().join(' ')} dist/cli.js serve, own process; SQLite; live keys in two accounts; RATE_LIMIT_LIVE_POINTS=10000000; LOG_LEVEL=info to /dev/null; defaults otherwise unless the scenario says`,
        wholesaler:
          'bench/overload/wholesaler.ts: node:http on 127.0.0.1, a canned one-article v2 answer after a fixed delay',
        clients: `bench/overload/clients.ts in the runner's process, one keep-alive connection per client (an undici Client), ${SHARES.map((s) => `${s.name} ${s.share * 100} %`).join(' / ')} of the clients; ${WAVES ? 'waves: every client connects (GET /v1/health, 500 new connections a second), then all send one call at once, the next wave once every answer is in' : 'closed loop; retry at once, or after Retry-After + U(0, 1 s)'}`,
        window: WAVES
          ? 'three waves'
          : `${SECONDS} s after a ramp (clients started evenly, 500 new connections a second)`,
        note: 'runner, gateway and wholesaler share the machine; load_average shows what else ran',
      },
      scenarios: rows,
    };
    const results = join(
      ROOT,
      'bench',
      'results',
      `overload${SHORT ? '-short' : MEMORY ? (WAVES ? '-memory' : '-memory-sustained') : ''}${ONLY ? `-${ONLY}` : ''}.json`,
    );
    writeResults(results, output);
    console.log(`[bench] wrote ${results}`);
  } finally {
    stopWatchdog();
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
  if (scenario.waves !== undefined) return runWaveScenario(scenario, wholesaler.child, gateway, body);
  const concurrency = Number(scenario.env.UPSTREAM_MAX_CONCURRENCY ?? DEFAULT_CONCURRENCY);
  const loadAverage = round(loadavg()[0]!, 2);
  let cpuBefore: number | null = null;
  let cpuAfter: number | null = null;
  let reported: Promise<WholesalerReport> | undefined;
  const watch = watchGateway(pid, gateway.url);
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
  const watched = await watch.finish();
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
    ...gatewayFigures(watched, report.peakHolding, { before: cpuBefore, after: cpuAfter, seconds: SECONDS }),
  };
  console.log(
    `[bench] ${scenario.name}: ${successes} / ${Math.round(capacity)} (${row.goodput_percent} %), wholesaler busy ${row.wholesaler_busy_percent} % (gap ${row.wholesaler_mean_gap_ms} ms), ` +
      `shares ${row.accounts.map((a) => `${a.account} ${a.share_percent} %`).join(' / ')}, refusals ${row.refusals_total} ${JSON.stringify(refusals)}, ` +
      `failures ${JSON.stringify(failures)}, p50/p99 ${row.latency_200_ms.p50}/${row.latency_200_ms.p99} ms, ` +
      `call p50/p99 ${row.call_ms_first_attempt_to_200.p50}/${row.call_ms_first_attempt_to_200.p99} ms, ` +
      `CPU ${row.gateway_cpu_percent} %, ${lagText(watched.lag)}, health p50/p99 ${row.health_ms.p50}/${row.health_ms.p99} ms, RSS ${row.gateway_peak_rss_mb} MB, load ${loadAverage}→${row.load_average_at_end}`,
  );
  return row;
}

/**
 * The memory scenario: every client connects, then `scenario.waves` times all of them send one call at
 * once (bench/overload/clients.ts `runWaves`). The figure is the gateway's peak RSS against the most
 * calls the wholesaler held at one time; goodput is the share of calls answered 200.
 */
async function runWaveScenario(
  scenario: Scenario,
  wholesaler: ChildProcess,
  gateway: RunningGateway,
  body: string,
): Promise<Record<string, unknown>> {
  const pid = gateway.child.pid!;
  const loadAverage = round(loadavg()[0]!, 2);
  console.log(
    `[bench] ${scenario.name}: ${scenario.clients} clients, ${scenario.waves} waves, load ${loadAverage}`,
  );
  const watch = watchGateway(pid, gateway.url);
  let cpuBefore: number | null = null;
  const waves = await runWaves({
    url: gateway.url,
    accounts: SHARES.map((share, i) => ({
      name: share.name,
      key: gateway.keys[i]!,
      clients: Math.round(scenario.clients * share.share),
    })),
    body,
    waves: scenario.waves!,
    connectPerSecond: 500,
    onConnected: () => {
      wholesaler.send({ window: 'start' });
      cpuBefore = cpuMs(pid);
      if (process.env.BENCH_HEAP_SNAPSHOT_DIR !== undefined)
        setTimeout(() => process.kill(pid, 'SIGUSR2'), scenario.callMs).unref();
    },
  });
  const cpuAfter = cpuMs(pid);
  const report = await wholesalerReport(wholesaler);
  const watched = await watch.finish();
  await stopChild(gateway.child);
  wholesaler.send({ stop: true });
  const calls = sum(waves.map((w) => w.calls));
  const successes = sum(waves.map((w) => w.successes));
  const elapsedS = sum(waves.map((w) => w.waveMs)) / 1000;
  const latencies = waves.flatMap((w) => w.latencies);
  const row = {
    scenario: scenario.name,
    gateway_node_flags: gatewayFlags(scenario).join(' '),
    clients: scenario.clients,
    waves: scenario.waves,
    call_ms: scenario.callMs,
    load_average_at_start: loadAverage,
    load_average_at_end: round(loadavg()[0]!, 2),
    calls,
    successes,
    goodput_percent: round((100 * successes) / calls, 1),
    failures: merge(waves.map((w) => w.failures)),
    wave_s: waves.map((w) => round(w.waveMs / 1000, 1)),
    wholesaler_peak_in_flight: report.peakHolding,
    latency_200_ms: {
      p50: Math.round(percentile(latencies, 50)),
      p99: Math.round(percentile(latencies, 99)),
    },
    ...gatewayFigures(watched, report.peakHolding, { before: cpuBefore, after: cpuAfter, seconds: elapsedS }),
  };
  console.log(
    `[bench] ${scenario.name}: ${successes} / ${calls} answered 200 (${row.goodput_percent} %), failures ${JSON.stringify(row.failures)}, ` +
      `waves ${row.wave_s.join(' / ')} s, wholesaler peak ${report.peakHolding} calls, RSS ${row.gateway_peak_rss_mb} MB ` +
      `(${row.gateway_peak_rss_kb_per_call_in_flight} KB a call), p50/p99 ${row.latency_200_ms.p50}/${row.latency_200_ms.p99} ms, ` +
      `CPU ${row.gateway_cpu_percent} %, ${lagText(watched.lag)}, health p50/p99 ${watched.health.p50}/${watched.health.p99} ms, load ${loadAverage}→${row.load_average_at_end}`,
  );
  return row;
}

/** Clients start evenly over this: 500 new connections a second, which the listen backlogs absorb. */
function rampMs(scenario: Scenario): number {
  return Math.max(2_000, (scenario.clients / 500) * 1000);
}

main().catch((error: unknown) => {
  console.error(error);
  stopAll();
  process.exit(1);
});
