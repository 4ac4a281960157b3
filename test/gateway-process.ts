import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/lib/clock.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { until } from './until.js';

/**
 * Real gateway processes for tests that kill them or run two at once: `node --import tsx src/cli.ts
 * serve` keeps each gateway one OS process, so SIGKILL really kills it.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The environment of a gateway process on `databaseUrl`: listening on a free loopback port, logging
 * warnings; `settings` add to it or override it.
 */
export function gatewayProcessEnv(databaseUrl: string, settings: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    ...settings,
  };
}

/** Migrates the database at `url` and creates an account with a test key; the key's secret. */
export async function testKeyOn(url: string): Promise<string> {
  const database = await openDatabase(url);
  try {
    await migrateToLatest(database);
    const account = await createAccount(database.db, systemClock, { name: 'Apotheke am Markt' });
    return (
      await createApiKey(database.db, systemClock, { accountId: account.id, name: 'test', mode: 'test' })
    ).secret;
  } finally {
    await database.close();
  }
}

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** Everything it wrote to stderr so far. */
  output: () => string;
  /** Its JSON log lines (stdout) so far. */
  logs: () => string;
}

/**
 * Starts `serve` with exactly `env` (no other variables) and resolves once it listens (within
 * `startTimeoutMs`, 30 s by default). The child is added to `started` at once, for the caller's clean-up.
 * Its standard output (the JSON log lines) is kept: `logs()`.
 */
export async function startGatewayProcess(
  env: NodeJS.ProcessEnv,
  started: ChildProcess[],
  startTimeoutMs = 30_000,
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  let logs = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    logs += chunk.toString();
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`gateway did not start in ${startTimeoutMs} ms:\n${output}`)),
        startTimeoutMs,
      );
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`gateway exited (${code ?? signal}) before listening:\n${output}`));
      });
    });
    return { child, url, output: () => output, logs: () => logs };
  } catch (error) {
    await killAndWait(child);
    throw error;
  }
}

/** SIGKILL, then wait for the exit (at most 5 s), so its database can be dropped afterwards. */
export function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGKILL');
  });
}

/** A catalogue file in `folder` with one v2 wholesaler, `phoenix`, whose test server is `testBaseUrl`. */
export function writePhoenixCatalogue(folder: string, testBaseUrl: string): string {
  const file = join(folder, 'wholesalers.json');
  writeFileSync(
    file,
    JSON.stringify({
      wholesalers: [{ id: 'phoenix', name: 'PHOENIX', version: 2, test: { baseUrl: testBaseUrl } }],
    }),
  );
  return file;
}

/**
 * `serve` as `npm start` runs it, on a SQLite database in `folder` with the built-in sandbox wholesaler
 * (and `env` on top): its URL, and the `pk_test_` key it prints on its first start.
 */
export async function startSandboxGatewayProcess(
  folder: string,
  started: ChildProcess[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ gateway: GatewayProcess; key: string }> {
  const gateway = await startGatewayProcess(
    gatewayProcessEnv(`sqlite:${join(folder, 'gateway.db')}`, { WHOLESALER_PROBE_INTERVAL_MS: '0', ...env }),
    started,
  );
  // The key goes to standard output (kept apart from the notes on standard error).
  const key = await until(
    () => `no first-start key printed:\n${gateway.output()}`,
    () => /^\s+(pk_test_\S+)$/m.exec(`${gateway.output()}\n${gateway.logs()}`)?.[1],
    10_000,
  );
  return { gateway, key };
}
