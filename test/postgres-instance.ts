import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import type { TestDatabase } from './db.js';

/**
 * A PostgreSQL server of a test's own, for tests that stop or restart the database under a running
 * gateway: the shared server of `TEST_DATABASE_URL` must never be stopped. initdb into a temporary
 * folder (as the `postgres` OS user when running as root, since initdb refuses root), a free loopback
 * port, the socket in the same folder, no fsync. `stop()` is an immediate shutdown by default (a crash,
 * as far as the gateway can tell), `start()` brings it back on the same port with the same data,
 * `dispose()` stops it and deletes the folder. A process exit stops it too, so a failing or aborted
 * test leaves no server behind. With `password`, TCP connections need it (scram-sha-256 in pg_hba.conf,
 * as a production server has it); without, everything is trusted.
 */

const run = promisify(execFile);

export interface PostgresInstance {
  /**
   * `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only), or with the
   * password percent-encoded in it.
   */
  readonly url: string;
  readonly port: number;
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

/** The newest Debian server binaries (`/usr/lib/postgresql/<version>/bin`), if any. */
function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Why a server of its own cannot be started here, or undefined when it can. */
export function postgresUnavailable(): string | undefined {
  if (postgresBinaries() === undefined) return 'no PostgreSQL server binaries in /usr/lib/postgresql/*/bin';
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser')) {
    return 'running as root without runuser (initdb refuses root)';
  }
  return undefined;
}

export async function startPostgresInstance(setup: { password?: string } = {}): Promise<PostgresInstance> {
  const bin = postgresBinaries();
  if (bin === undefined) throw new Error(postgresUnavailable());
  const folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-pg-'));
  const data = join(folder, 'data');
  const asRoot = process.getuid?.() === 0;
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  const pgCtl = (...args: string[]) => command('pg_ctl', ['-D', data, ...args]);
  const stopCommand = (mode: 'immediate' | 'fast') => pgCtl('-m', mode, '-w', '-t', '30', 'stop');
  let running = false;
  const stopOnExit = () => {
    if (running) {
      try {
        execFileSync(...stopCommand('immediate'), { stdio: 'ignore' });
      } catch {}
    }
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const auth = ['--auth=trust'];
    if (setup.password !== undefined) {
      const passwordFile = join(folder, 'password');
      writeFileSync(passwordFile, `${setup.password}\n`);
      chmodSync(passwordFile, 0o600);
      if (asRoot) execFileSync('chown', ['postgres:', passwordFile]);
      auth.push('--auth-host=scram-sha-256', `--pwfile=${passwordFile}`);
    }
    if (asRoot) execFileSync('chown', ['postgres:', folder]);
    await run(...command('initdb', ['-D', data, '-U', 'postgres', ...auth, '--no-sync', '-E', 'UTF8']));
    const port = await freePort();
    const options = [
      `-p ${port}`,
      `-k ${folder}`,
      '-c listen_addresses=127.0.0.1',
      // Nothing here needs to survive a crash of the machine.
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c shared_buffers=16MB',
      '-c max_connections=60',
    ].join(' ');
    const start = async () => {
      await run(...pgCtl('-o', options, '-l', join(folder, 'server.log'), '-w', '-t', '30', 'start'));
      running = true;
    };
    await start();
    process.once('exit', stopOnExit);
    const secret = setup.password === undefined ? '' : `:${encodeURIComponent(setup.password)}`;
    return {
      url: `postgres://postgres${secret}@127.0.0.1:${port}/postgres`,
      port,
      start,
      async stop(mode = 'immediate') {
        await run(...stopCommand(mode));
        running = false;
      },
      async dispose() {
        process.off('exit', stopOnExit);
        if (running) await run(...stopCommand('immediate')).catch(() => {});
        running = false;
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    stopOnExit();
    throw error;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The database of `instance`, migrated, as the `TestDatabase` that `startGateway` takes: one pool of
 * five connections, no second handle (`openAnother` throws), `dispose` closes it. Stopping the server
 * stays the caller's.
 */
export async function migratedDatabaseOn(instance: PostgresInstance): Promise<TestDatabase> {
  const database = await openDatabase(instance.url, { maxConnections: 5 });
  await migrateToLatest(database);
  return {
    ...database,
    url: instance.url,
    openAnother: () => {
      throw new Error('not needed by this test');
    },
    dispose: database.close,
  };
}
