import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/lib/clock.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';

/**
 * Real gateway processes (`node --import tsx src/cli.ts serve`), as an operator runs them: the battery
 * watches their exits and keeps the tail of what they print (stdout logs and stderr), to look for
 * leaked passwords and to explain an unexpected exit.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEEP_OUTPUT_CHARS = 4 * 1024 * 1024;

export interface Gateway {
  readonly child: ChildProcess;
  readonly url: string;
  readonly pid: number;
  /** How long it took from spawn to listening. */
  readonly startMs: number;
  /** Everything printed so far (the last 4 MB). */
  output(): string;
  /** Set once the process exited: code or signal. */
  exit(): string | undefined;
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<string>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

/** Variables every battery gateway gets on top of the check's own: loopback, quiet, no probes. */
export function baseEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    WHOLESALER_PROBE_INTERVAL_MS: '0',
  };
}

export async function startGateway(env: NodeJS.ProcessEnv, all: Gateway[] = []): Promise<Gateway> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > KEEP_OUTPUT_CHARS) output = output.slice(-KEEP_OUTPUT_CHARS / 2);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exit: string | undefined;
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = String(code ?? signal);
      resolve(exit);
    }),
  );
  const kill = async () => {
    if (exit === undefined) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in 60 s:\n${output}`)), 60_000);
    const look = () => {
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      child.stderr?.off('data', look);
      resolve(match[1]!);
    };
    child.stderr?.on('data', look);
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited (${how}) before listening:\n${output.slice(-4000)}`));
    });
  }).catch(async (error: unknown) => {
    await kill();
    throw error;
  });
  const gateway: Gateway = {
    child,
    url,
    pid: child.pid ?? 0,
    startMs: performance.now() - spawnedAt,
    output: () => output,
    exit: () => exit,
    exited,
    kill,
  };
  all.push(gateway);
  return gateway;
}

export interface Keys {
  test: string;
  live: string;
}

/** Migrates `databaseUrl` and creates one account with a test and a live key. */
export async function provisionKeys(databaseUrl: string): Promise<Keys> {
  const database = await openDatabase(databaseUrl, { maxConnections: 2 });
  try {
    await migrateToLatest(database);
    const account = await createAccount(database.db, systemClock, { name: 'Battery Apotheke' });
    const key = (mode: 'test' | 'live') =>
      createApiKey(database.db, systemClock, { accountId: account.id, name: `battery ${mode}`, mode });
    return { test: (await key('test')).secret, live: (await key('live')).secret };
  } finally {
    await database.close();
  }
}

/** The last line of `output` that names an error, for a report (at most 200 characters). */
export function lastErrorLine(output: string): string {
  const lines = output.split('\n').filter((l) => /error|terminat|fatal/i.test(l));
  return (lines.at(-1) ?? output.slice(-200)).trim().slice(0, 200);
}
