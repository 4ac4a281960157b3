import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * A PostgreSQL server of a test's own (initdb into a temporary folder, a free loopback port), for tests
 * that stop or restart the database: the shared server on 5432 must never be touched. As root, the
 * binaries run as the `postgres` OS user (initdb refuses root).
 */

const run = promisify(execFile);

/** Where Debian/Ubuntu put the PostgreSQL 15 server binaries. */
export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';

export function postgresBinariesAvailable(): boolean {
  return ['initdb', 'pg_ctl', 'postgres'].every((name) => existsSync(join(POSTGRES_BIN, name)));
}

export interface PostgresInstance {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** `pg_ctl stop` (immediate: no shutdown checkpoint, backends killed at once, as in a crash). */
  stop(mode: 'immediate' | 'fast'): Promise<void>;
  /** Starts it again on the same port and folder; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (if running) and deletes its folder. */
  dispose(): Promise<void>;
}

export async function startPostgresInstance(): Promise<PostgresInstance> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-pg-'));
  const data = join(folder, 'data');
  const asRoot = process.getuid?.() === 0;
  const runAsOwner = async (binary: string, args: string[]) => {
    const path = join(POSTGRES_BIN, binary);
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
    await run(file, argv, { timeout: 30_000 });
  };
  try {
    if (asRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: group } = await run('id', ['-g', 'postgres']);
      chownSync(folder, Number(stdout.trim()), Number(group.trim()));
    }
    await runAsOwner('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '--no-sync',
      '--no-instructions',
    ]);
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  const serverOptions = [
    `-p ${port}`,
    `-k ${folder}`,
    '-c listen_addresses=127.0.0.1',
    // Nothing here needs to survive a crash of the machine.
    '-c fsync=off',
    '-c full_page_writes=off',
  ].join(' ');
  const start = () =>
    runAsOwner('pg_ctl', [
      '-D',
      data,
      '-o',
      serverOptions,
      '-l',
      join(folder, 'server.log'),
      '-w',
      '-t',
      '30',
      'start',
    ]);
  const instance: PostgresInstance = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop(mode) {
      await runAsOwner('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
    },
    start,
    async dispose() {
      // Fails quickly (and harmlessly) when it is not running.
      await instance.stop('immediate').catch(() => {});
      rmSync(folder, { recursive: true, force: true });
    },
  };
  try {
    await start();
  } catch (error) {
    await instance.dispose();
    throw error;
  }
  return instance;
}

/** A port free on 127.0.0.1 right now (the kernel's pick). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
