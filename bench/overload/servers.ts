/**
 * The processes of bench/overload: the slow wholesaler (wholesaler.ts), the gateway as a start script of
 * package.json starts it, and the pass-through reference (bench/gateway/baseline.ts). Each is tracked,
 * so `stopAll` ends it whatever happens; everything listens on 127.0.0.1.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import { CLI, startScriptNodeFlags, track, untilListening } from '../common/processes.js';

const ROOT = process.cwd();
const HERE = dirname(fileURLToPath(import.meta.url));

/** Two live keys in two accounts share the clients 80 % / 20 %. */
export const SHARES = [
  { name: 'acct_large', share: 0.8 },
  { name: 'acct_small', share: 0.2 },
];

export const DEFAULT_CONCURRENCY = 16;

/** How a scenario's server is started. */
export interface ServerSetup {
  name: string;
  env: Record<string, string>;
  /** The package.json script whose node flags start the gateway (`start` unless said). */
  startScript?: string;
  /**
   * Instead of the gateway, bench/gateway/baseline.ts: bare Fastify forwarding with undici, nothing
   * else. What any Node server of that shape pays per call in flight, measured in the same run.
   */
  passThrough?: boolean;
}

export interface RunningGateway {
  child: ChildProcess;
  url: string;
  keys: string[];
}

export async function startWholesaler(callMs: number): Promise<{ child: ChildProcess; port: number }> {
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

export interface WholesalerReport {
  answered: number;
  peakHolding: number;
  meanHolding: number;
  meanGapMs: number | null;
}

export function wholesalerReport(child: ChildProcess): Promise<WholesalerReport> {
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

export async function startGateway(
  folder: string,
  scenario: ServerSetup,
  wholesalerBase: string,
): Promise<RunningGateway> {
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
export async function startPassThrough(
  scenario: ServerSetup,
  wholesalerBase: string,
): Promise<RunningGateway> {
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
export function gatewayFlags(scenario: ServerSetup): string[] {
  return (
    process.env.BENCH_GATEWAY_NODE_FLAGS?.split(' ').filter(Boolean) ??
    startScriptNodeFlags(scenario.startScript)
  );
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
}
