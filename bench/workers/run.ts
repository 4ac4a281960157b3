/**
 * WORKERS benchmark (not part of `npm test`): `npm run bench:workers`.
 *
 * The same load against two gateways started side by side from `dist/` the way `npm start` starts them
 * (node with the V8 flags of package.json's start script, `dist/cli.js serve`): one with WORKERS=1 (one
 * process, as before) and one with WORKERS=2 (a primary and two workers, docs/operating.md "All cores:
 * WORKERS"). Load: wrk `-t1 -c32`, `POST /v1/availability` with 50 items, a live API key and the MSV3
 * headers, as bench/gateway; both gateways call one canned SOAP upstream (bench/gateway/upstream.ts, its
 * own process). Each gateway: its own SQLite file, a catalogue whose wholesaler `bench` has the canned
 * upstream as its live server, generous rate limits (still counted on every request: in memory for one
 * process, in the primary over IPC for two workers), LOG_LEVEL=info to /dev/null, defaults otherwise.
 * Warm-up 5 s each, then BENCH_RUNS (3) runs of BENCH_SECONDS (10) s each, alternating (1 2, 2 1, 1 2);
 * medians. Recorded too: CPU time per request of the gateway's processes (the primary and its workers,
 * from /proc) and the 1-minute load average at each run's start, since the figures depend on what else
 * the machine does. Everything stays on 127.0.0.1 and stops by itself. Writes bench/results/workers.json.
 * Also reported: what WORKERS=2 would give with a core per worker, from CPU per request (2 × the
 * one-process CPU per request ÷ the two workers' and their primary's), since on a 2-core machine wrk
 * and the upstream take cores too. BENCH_WRK_CPUS=1 BENCH_GATEWAY_CPUS=0 pins wrk and the upstream to
 * core 1 and the gateways to core 0 (taskset).
 */

import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { va50Articles } from '../codec/envelopes.js';
import { expectEveryArticleAsked } from '../common/availability-answer.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import {
  CLI,
  processCpuUs,
  startScriptNodeFlags,
  startWatchdog,
  stopAll,
  stopAndWait,
  track,
  untilListening,
} from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { checkWrk, writeWrkScript, wrk, wrkVersion } from '../common/wrk.js';

const ROOT = process.cwd();
const HERE = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(ROOT, 'bench', 'results', 'workers.json');
const RUNS = Math.min(Number(process.env.BENCH_RUNS ?? 3), 9);
const SECONDS = Math.min(Number(process.env.BENCH_SECONDS ?? 10), 60);
const WARMUP_SECONDS = 5;
const CONNECTIONS = 32;
const VARIANTS = [1, 2] as const;
const GATEWAY_CPUS = process.env.BENCH_GATEWAY_CPUS;
/** The whole benchmark stops itself after this, whatever happens. */
const WATCHDOG_MS = 10 * 60_000;

type Variant = (typeof VARIANTS)[number];

interface RunResult {
  load_average: number;
  requests_per_second: number;
  p50_us: number;
  p99_us: number;
  /** CPU time (user + system) of the gateway's processes per request, µs; null without /proc. */
  gateway_cpu_us_per_request: number | null;
  /** Of that, the primary's (WORKERS=2: connections handed out, rate limits over IPC); null for 1. */
  primary_cpu_us_per_request: number | null;
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  checkWrk();
  const wrkUsed = wrkVersion();
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-workers-'));
  const stopWatchdog = startWatchdog(WATCHDOG_MS);
  try {
    const upstream = await startUpstream();
    const upstreamBase = `http://127.0.0.1:${upstream.port}/msv3/v2.0`;
    const gateways = {
      1: await startGateway(folder, upstreamBase, 1),
      2: await startGateway(folder, upstreamBase, 2),
    } as const;
    const body = JSON.stringify({
      wholesaler: 'bench',
      items: va50Articles().map((article) => ({
        pzn: article.pzn.padStart(8, '0'),
        quantity: article.quantity,
      })),
    });
    const headers = (key: string) => ({
      'content-type': 'application/json',
      'x-api-key': key,
      'x-msv3-username': 'bench1',
      'x-msv3-password': 'geheim',
    });
    const scripts = {} as Record<Variant, string>;
    for (const variant of VARIANTS) {
      const gateway = gateways[variant];
      const answer = await fetch(`${gateway.url}/v1/availability`, {
        method: 'POST',
        headers: headers(gateway.key),
        body,
      });
      if (answer.status !== 200)
        throw new Error(`WORKERS=${variant} answered ${answer.status} ${await answer.text()}`);
      expectEveryArticleAsked(await answer.json(), `WORKERS=${variant}`);
      scripts[variant] = writeWrkScript(folder, `workers-${variant}`, headers(gateway.key), body);
    }
    const load = (variant: Variant, seconds: number) =>
      wrk(`${gateways[variant].url}/v1/availability`, scripts[variant], seconds, CONNECTIONS);

    console.log(`[bench] warm-up: ${WARMUP_SECONDS} s each`);
    for (const variant of VARIANTS) await load(variant, WARMUP_SECONDS);
    const runs: Record<Variant, RunResult[]> = { 1: [], 2: [] };
    for (let run = 1; run <= RUNS; run++) {
      for (const variant of run % 2 === 1 ? VARIANTS : [...VARIANTS].reverse()) {
        await sleep(500);
        const loadAverage = Math.round(loadavg()[0]! * 100) / 100;
        const pid = gateways[variant].child.pid!;
        const cpuBefore = treeCpuUs(pid);
        const primaryBefore = variant === 1 ? null : processCpuUs(pid);
        const result = await load(variant, SECONDS);
        const cpuAfter = treeCpuUs(pid);
        const primaryAfter = variant === 1 ? null : processCpuUs(pid);
        const errors =
          result.errors_connect + result.errors_read + result.errors_write + result.errors_status;
        if (errors + result.errors_timeout > 0)
          throw new Error(`WORKERS=${variant} run ${run}: wrk reported errors ${JSON.stringify(result)}`);
        const row: RunResult = {
          load_average: loadAverage,
          requests_per_second: Math.round(result.requests / (result.duration_us / 1e6)),
          p50_us: result.p50_us,
          p99_us: result.p99_us,
          gateway_cpu_us_per_request:
            cpuBefore === null || cpuAfter === null
              ? null
              : Math.round((cpuAfter - cpuBefore) / result.requests),
          primary_cpu_us_per_request:
            primaryBefore === null || primaryAfter === null
              ? null
              : Math.round((primaryAfter - primaryBefore) / result.requests),
        };
        runs[variant].push(row);
        console.log(`[bench] run ${run} WORKERS=${variant} ${JSON.stringify(row)}`);
      }
    }
    const median = { workers_1: medians(runs[1]), workers_2: medians(runs[2]) };
    const output = {
      benchmark: 'WORKERS=1 vs WORKERS=2: POST /v1/availability, 50 items (bench/workers/run.ts)',
      command: 'npm run bench:workers',
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, wrk: wrkUsed },
      setup: {
        load: `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, ${RUNS} runs after a ${WARMUP_SECONDS} s warm-up each, gateways alternating, medians`,
        gateways: `node ${startScriptNodeFlags().join(' ')} dist/cli.js serve with WORKERS=1 and WORKERS=2, side by side; SQLite; live key; RATE_LIMIT_LIVE_POINTS=1000000 (memory store: in-process for 1, the primary over IPC for 2); LOG_LEVEL=info to /dev/null`,
        upstream: 'bench/gateway/upstream.ts: node:http on 127.0.0.1, canned 50-article v2 answer, at once',
        note: 'wrk, the upstream and both gateways share the machine; load_average shows what else ran',
      },
      median,
      throughput_2_over_1: round(
        median.workers_2.requests_per_second / median.workers_1.requests_per_second,
        3,
      ),
      /**
       * What WORKERS=2 would give with a core of its own per worker, from CPU per request: 2 × (CPU per
       * request with one process ÷ with two workers and their primary), the median of the runs' pairs.
       */
      cpu_scaling_2_over_1: cpuScaling(runs[1], runs[2]),
      pinning: {
        wrk_and_upstream: process.env.BENCH_WRK_CPUS ?? null,
        gateway: GATEWAY_CPUS ?? null,
      },
      runs: { workers_1: runs[1], workers_2: runs[2] },
    };
    writeResults(RESULTS, output);
    for (const variant of VARIANTS) {
      const m = median[`workers_${variant}`];
      console.log(
        `[bench] WORKERS=${variant}: ${m.requests_per_second} req/s, p50 ${m.p50_us} µs, p99 ${m.p99_us} µs, ` +
          `CPU ${m.gateway_cpu_us_per_request ?? '-'} µs/req (runs: ${runs[variant].map((r) => r.requests_per_second).join(' / ')})`,
      );
    }
    console.log(
      `[bench] WORKERS=2 / WORKERS=1: ${output.throughput_2_over_1} in throughput; ${output.cpu_scaling_2_over_1 ?? '-'} with a core per worker, from CPU per request; wrote ${RESULTS}`,
    );
    for (const variant of VARIANTS) await stopAndWait(gateways[variant].child);
    upstream.child.send({ stop: true });
  } finally {
    stopWatchdog();
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function startUpstream(): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(join(HERE, '..', 'gateway', 'upstream.ts'), ['0'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  track(child);
  // With BENCH_WRK_CPUS the upstream shares wrk's cores, away from the gateway's.
  if (process.env.BENCH_WRK_CPUS !== undefined)
    execFileSync('taskset', ['-a', '-p', '-c', process.env.BENCH_WRK_CPUS, String(child.pid)], {
      stdio: 'ignore',
    });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('upstream: not ready within 60 s')), 60_000);
    child.on('message', (message: { port?: number }) => {
      if (message.port === undefined) return;
      clearTimeout(timer);
      resolve(message.port);
    });
  });
  return { child, port };
}

async function startGateway(
  folder: string,
  upstreamBase: string,
  workers: Variant,
): Promise<{ child: ChildProcess; url: string; key: string }> {
  const env = benchGatewayEnv({
    folder,
    upstream: { baseUrl: upstreamBase, name: 'Canned upstream' },
    databaseFile: `gateway-${workers}.db`,
    settings: { WORKERS: String(workers), CREATE_FIRST_KEY: 'false', RATE_LIMIT_LIVE_POINTS: '1000000' },
  });
  const key = createLiveKey(env, 'bench');
  const command = [process.execPath, ...startScriptNodeFlags(), CLI, 'serve'];
  // BENCH_GATEWAY_CPUS=<list>: the gateway (and the workers it forks) on those cores only.
  const pinned = GATEWAY_CPUS === undefined ? command : ['taskset', '-c', GATEWAY_CPUS, ...command];
  const child = spawn(pinned[0]!, pinned.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  track(child);
  const url = await untilListening(child, `WORKERS=${workers}`, 120_000);
  return { child, url, key };
}

/** utime + stime of a process and its children (a primary and its workers) in µs, from /proc; null elsewhere. */
function treeCpuUs(pid: number): number | null {
  try {
    const own = processCpuUs(pid);
    if (own === null) return null;
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    return kids.reduce((sum, kid) => {
      return sum + (processCpuUs(Number(kid)) ?? 0); // 0: a worker that just exited
    }, own);
  } catch {
    return null;
  }
}

function medians(runs: RunResult[]): RunResult {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const keys = Object.keys(runs[0]!) as (keyof RunResult)[];
  return Object.fromEntries(
    keys.map((k) => {
      const values = runs.map((r) => r[k]);
      return [k, values.some((v) => v === null) ? null : median(values as number[])];
    }),
  ) as unknown as RunResult;
}

function cpuScaling(one: RunResult[], two: RunResult[]): number | null {
  const pairs = one.map((run, i) => {
    const a = run.gateway_cpu_us_per_request;
    const b = two[i]?.gateway_cpu_us_per_request;
    return a === null || b === null || b === undefined ? null : (2 * a) / b;
  });
  if (pairs.some((p) => p === null)) return null;
  const sorted = (pairs as number[]).sort((a, b) => a - b);
  return round(sorted[Math.floor(sorted.length / 2)]!, 3);
}

function round(value: number, digits: number): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

main().catch((error: unknown) => {
  console.error(error);
  stopAll();
  process.exit(1);
});
