import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

/**
 * The battery's own PostgreSQL server: initdb into a temporary folder, started on a free loopback port as
 * the `postgres` OS user (initdb refuses root), so it can be stopped, restarted and have its connections
 * terminated without touching the machine's shared server on 5432.
 */

const run = promisify(execFile);

export interface OwnPostgres {
  readonly port: number;
  /** The server's write-ahead log (`<data>/pg_wal`) and its own log file, for the secrets search. */
  readonly walDir: string;
  readonly logFile: string;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** pg_terminate_backend on every other connection to `database`; resolves to how many were cut. */
  terminateBackends(database: string): Promise<number>;
  query<T extends pg.QueryResultRow>(database: string, text: string): Promise<T[]>;
  /** `pg_ctl stop -m immediate`: the server dies without saying goodbye to its clients. */
  stopImmediately(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (if running) and deletes its folder. */
  remove(): Promise<void>;
}

/** The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl, or undefined. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(root, versions[0]!, 'bin');
}

/** Runs as the postgres OS user when we are root (initdb and postgres refuse root). */
function asPostgres(bin: string, args: string[]): Promise<unknown> {
  const isRoot = process.getuid?.() === 0;
  return isRoot ? run('runuser', ['-u', 'postgres', '--', bin, ...args]) : run(bin, args);
}

export async function startOwnPostgres(binDir: string): Promise<OwnPostgres> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-pg-'));
  const data = join(folder, 'data');
  if (process.getuid?.() === 0) chownSync(folder, ...postgresIds());
  const port = await freePort();
  const pgCtl = join(binDir, 'pg_ctl');
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  let running = false;
  const start = async () => {
    await asPostgres(pgCtl, [
      '-D',
      data,
      '-l',
      join(folder, 'log'),
      '-o',
      options,
      '-w',
      '-t',
      '60',
      'start',
    ]);
    running = true;
  };
  const adminQuery = async <T extends pg.QueryResultRow>(database: string, text: string) => {
    const client = new pg.Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  };
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  try {
    await asPostgres(join(binDir, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    await start();
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    walDir: join(data, 'pg_wal'),
    logFile: join(folder, 'log'),
    url,
    async createDatabase(name) {
      await adminQuery('postgres', `create database ${name}`);
      return url(name);
    },
    async terminateBackends(database) {
      const rows = await adminQuery<{ cut: boolean }>(
        'postgres',
        `select pg_terminate_backend(pid) as cut from pg_stat_activity
           where datname = '${database}' and pid <> pg_backend_pid()`,
      );
      return rows.filter((r) => r.cut).length;
    },
    query: adminQuery,
    async stopImmediately() {
      await asPostgres(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
    },
    start,
    async remove() {
      if (running) await asPostgres(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The postgres OS user's uid and gid, from /etc/passwd. */
function postgresIds(): [number, number] {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (line === undefined) throw new Error('there is no postgres OS user (is PostgreSQL installed?)');
  const [, , uid, gid] = line.split(':');
  return [Number(uid), Number(gid)];
}
