import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Database } from '../src/store/database.js';

/**
 * A PostgreSQL server of a test's own, for tests that stop the database under a running gateway: the
 * shared server of `TEST_DATABASE_URL` must never be stopped. initdb into a temporary folder (as the
 * `postgres` OS user when running as root, since initdb refuses root), a free loopback port, the socket
 * in the same folder, no fsync. `stop()` is an immediate shutdown (a crash, as far as the gateway can
 * tell), `start()` brings it back on the same port with the same data, `dispose()` stops it and deletes
 * the folder. A process exit stops it too, so a failing or aborted test leaves no server behind.
 */

const BIN = '/usr/lib/postgresql/15/bin';
const run = promisify(execFile);

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

/** Why the binaries cannot be used here, or undefined when they can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!existsSync(join(BIN, 'initdb')) || !existsSync(join(BIN, 'pg_ctl'))) {
    return `PostgreSQL binaries not found in ${BIN}`;
  }
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser')) {
    return 'running as root without runuser (initdb refuses root)';
  }
  return undefined;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-pg-'));
  const data = join(folder, 'data');
  const asRoot = process.getuid?.() === 0;
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(BIN, tool), ...args]] : [join(BIN, tool), args];
  const pgCtl = (...args: string[]) => command('pg_ctl', ['-D', data, ...args]);
  const stopNow = () => pgCtl('-m', 'immediate', '-w', 'stop');
  let running = false;
  const stopOnExit = () => {
    if (!running) return;
    try {
      execFileSync(...stopNow(), { stdio: 'ignore' });
    } catch {}
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    if (asRoot) execFileSync('chown', ['postgres:', folder]);
    await run(
      ...command('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']),
    );
    const port = await freePort();
    const options = [
      `-p ${port}`,
      `-k ${folder}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c shared_buffers=16MB',
      '-c max_connections=40',
    ].join(' ');
    const start = async () => {
      await run(...pgCtl('-o', options, '-l', join(folder, 'server.log'), '-w', '-t', '30', 'start'));
      running = true;
    };
    await start();
    process.once('exit', stopOnExit);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      start,
      async stop() {
        await run(...stopNow());
        running = false;
      },
      async dispose() {
        process.off('exit', stopOnExit);
        if (running) await run(...stopNow()).catch(() => {});
        running = false;
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    stopOnExit();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

/**
 * pg emits 'error' on a pooled client whose connection breaks while it is checked out, and pg-pool listens
 * only on idle ones: without a listener of its own the event would end the test process when the server
 * is stopped mid-query. The failed query is rejected either way; this only keeps the process alive.
 */
export function keepAliveOnBrokenConnections(database: Database): void {
  database.pgPool?.on('connect', (client) => client.on('error', () => {}));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
