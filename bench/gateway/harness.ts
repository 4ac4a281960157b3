/**
 * What the gateway benchmarks share (bench/gateway/run.ts, bench/gateway/fast-paths.ts): starting the
 * canned upstream, the baseline and the gateway as their own processes, loading them with wrk and
 * reading a process's CPU time from /proc. Everything stays on 127.0.0.1; `stopAll` ends every process
 * started here.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { va50Articles } from '../codec/envelopes.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import {
  CLI,
  processCpuUs,
  processVoluntarySwitches,
  startScriptNodeFlags,
  track,
  untilListening,
} from '../common/processes.js';
import { wrk } from '../common/wrk.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
/** The package.json script whose node flags start the gateway: `start`, or BENCH_START_SCRIPT. */
export const START_SCRIPT = process.env.BENCH_START_SCRIPT ?? 'start';
export const START_NODE_FLAGS = startScriptNodeFlags(START_SCRIPT);
export const LOG_LEVEL = 'info';
/** The gateway's default UPSTREAM_MAX_CONCURRENCY. */
export const UPSTREAM_CONNECTIONS = 16;

export interface Gateway {
  child: ChildProcess;
  url: string;
  key: string;
}

export interface RunResult {
  load_average: number;
  requests_per_second: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  mean_us: number;
  /** CPU time (user + system) of the server process per request, µs; null without /proc. */
  server_cpu_us_per_request: number | null;
  /** Voluntary context switches of all the server's threads per request; null without /proc. */
  server_voluntary_switches_per_request: number | null;
}

/** One wrk run of `seconds` against `url` (after a short pause), with the server's CPU time per request. */
export async function measure(
  label: string,
  pid: number,
  url: string,
  script: string,
  seconds: number,
  connections: number,
): Promise<RunResult> {
  await sleep(500);
  const load = Math.round(loadavg()[0]! * 100) / 100;
  const cpuBefore = processCpuUs(pid);
  const switchesBefore = processVoluntarySwitches(pid);
  const result = await wrk(url, script, seconds, connections);
  const cpuAfter = processCpuUs(pid);
  const switchesAfter = processVoluntarySwitches(pid);
  const errors =
    result.errors_connect +
    result.errors_read +
    result.errors_write +
    result.errors_status +
    result.errors_timeout;
  if (errors > 0) throw new Error(`${label}: wrk reported errors ${JSON.stringify(result)}`);
  return {
    load_average: load,
    requests_per_second: Math.round(result.requests / (result.duration_us / 1e6)),
    p50_us: result.p50_us,
    p90_us: result.p90_us,
    p99_us: result.p99_us,
    mean_us: Math.round(result.mean_us),
    server_cpu_us_per_request:
      cpuBefore === null || cpuAfter === null ? null : Math.round((cpuAfter - cpuBefore) / result.requests),
    server_voluntary_switches_per_request:
      switchesBefore === null || switchesAfter === null
        ? null
        : Math.round(((switchesAfter - switchesBefore) / result.requests) * 100) / 100,
  };
}

export interface Forked {
  child: ChildProcess;
  port: number;
  bytes?: number;
  when(key: string): Promise<Record<string, unknown>>;
}

/**
 * Forks `name` (upstream.ts or baseline.ts) and waits for its `ready` message. `options`: node flags for
 * it (the parent's by default), or another program that runs node (`execPath: 'valgrind'` with its own
 * flags and node's path first in `execArgv`); `quiet` drops its standard error; `readyWithinMs` (30 s).
 */
export async function forkChild(
  name: 'upstream' | 'baseline',
  args: string[],
  options: { execArgv?: string[]; execPath?: string; quiet?: boolean; readyWithinMs?: number } = {},
): Promise<Forked> {
  const child = fork(join(HERE, `${name}${EXT}`), args, {
    execArgv: options.execArgv ?? process.execArgv,
    ...(options.execPath === undefined ? {} : { execPath: options.execPath }),
    stdio: ['ignore', 'inherit', options.quiet ? 'ignore' : 'inherit', 'ipc'],
  });
  track(child);
  const within = options.readyWithinMs ?? 30_000;
  const when = (key: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name}: no "${key}" within ${within / 1000} s`)),
        within,
      );
      const onMessage = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
    });
  const ready = await when('ready');
  return { child, port: ready.port as number, bytes: ready.bytes as number | undefined, when };
}

/**
 * Starts the gateway as `npm start` does, in its own process, with its own SQLite database in `folder`,
 * a catalogue whose wholesaler `bench` has `upstreamBase` as its live server and a live key made with
 * `keys create`. `env` adds settings (FAST_PATH_…); `nodeFlags` adds node flags (`--cpu-prof`); `under`
 * runs node under another program (valgrind).
 */
export async function startGateway(
  folder: string,
  upstreamBase: string,
  options: {
    env?: Record<string, string>;
    nodeFlags?: string[];
    /** A program and its flags that runs node (`['valgrind', '--tool=callgrind', …]`), and its start-up time. */
    under?: { command: string[]; listenWithinMs: number };
    /** Another build's `dist/cli.js` (`--builds`); this checkout's by default. */
    cli?: string;
  } = {},
): Promise<Gateway & { env: NodeJS.ProcessEnv }> {
  const env = benchGatewayEnv({
    folder,
    upstream: { baseUrl: upstreamBase, name: 'Canned upstream' },
    databaseFile: 'gateway.db',
    settings: {
      LOG_LEVEL,
      RATE_LIMIT_LIVE_POINTS: '1000000',
      RATE_LIMIT_TEST_POINTS: '1000000',
      ...options.env,
    },
  });
  // The key is made by the build that serves it: another build's database has its own migrations.
  const key = createLiveKey(env, 'bench', options.cli);
  const [program = process.execPath, ...programFlags] = options.under?.command ?? [];
  const node = options.under === undefined ? [] : [process.execPath];
  const args = [
    ...programFlags,
    ...node,
    ...START_NODE_FLAGS,
    ...(options.nodeFlags ?? []),
    options.cli ?? CLI,
    'serve',
  ];
  const child = spawn(program, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  track(child);
  const url = await untilListening(child, 'gateway', options.under?.listenWithinMs ?? 30_000);
  return { child, url, key, env };
}

/**
 * The JSON body every gateway benchmark posts to `/v1/availability`: the 50 articles of the canned
 * answer (valid PZNs, padded), each demand type in turn.
 */
export function availabilityBody(): string {
  return JSON.stringify({
    wholesaler: 'bench',
    items: va50Articles().map((article, i) => ({
      pzn: article.pzn.padStart(8, '0'),
      quantity: article.quantity,
      demand_type: ['direct', 'unspecified', 'one_of_many'][i % 3],
    })),
  });
}

/** The headers every gateway benchmark sends with that body: JSON, the gateway's live key, a wholesaler login. */
export function availabilityHeaders(key: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-api-key': key,
    'x-msv3-username': 'bench1',
    'x-msv3-password': 'geheim',
  };
}

/** Node flags from a setting of space-separated flags (`BUILDS_OTHER_NODE_FLAGS`); none when it is unset. */
export function nodeFlagsSetting(name: string): string[] {
  return (process.env[name] ?? '').split(' ').filter(Boolean);
}

export function boundedSetting(name: string, fallback: number, min: number, max: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}

export async function post(url: string, headers: Record<string, string>, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`);
  return text;
}

/**
 * Each run's server CPU per request over that of the reference run paired with it (the same round,
 * seconds apart), the reference less `referenceLessUs` (a spin it did on purpose); null where a figure
 * is missing (no /proc).
 */
export function cpuRatios(runs: RunResult[], reference: RunResult[], referenceLessUs = 0): number[] | null {
  const ratios: number[] = [];
  for (const [i, run] of runs.entries()) {
    const a = run.server_cpu_us_per_request;
    const b = reference[i]?.server_cpu_us_per_request;
    if (a === null || b === null || b === undefined) return null;
    ratios.push(a / (b - referenceLessUs));
  }
  return ratios;
}

/** The middle value (the upper of the two middle ones for an even count, as the earlier results). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function medians(runs: RunResult[]): RunResult {
  const keys = Object.keys(runs[0]!) as (keyof RunResult)[];
  return Object.fromEntries(
    keys.map((k) => {
      const values = runs.map((r) => r[k]);
      return [k, values.some((v) => v === null) ? null : median(values as number[])];
    }),
  ) as unknown as RunResult;
}

/** Linear interpolation between the order statistics of `sorted` (ascending). */
export function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (at - below);
}
