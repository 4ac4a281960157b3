import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import pg from 'pg';
import type { Tables } from './schema.js';
import { withStatementCache } from './sqlite-statements.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /** The pg pool behind `db` (PostgreSQL only), for stores that need a raw client, e.g. the rate limiter. */
  readonly pgPool?: pg.Pool;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL: the schema put first on every connection's search_path (tests use a fresh one). */
  schema?: string;
  /** PostgreSQL: pool size. */
  maxConnections?: number;
  /**
   * PostgreSQL: a pooled connection failed (terminated by the server, the server stopped, the network
   * cut), whether idle in the pool or checked out by a query or transaction.
   */
  onConnectionError?: (error: Error) => void;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Opens `sqlite:<file>` / `sqlite::memory:` or `postgres(ql)://…` and checks that it answers. */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const database = url.startsWith('sqlite:') ? openSqlite(url) : openPostgres(url, options);
  try {
    await database.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return database;
}

/** The absolute file of a `sqlite:<file>` URL; undefined for PostgreSQL and `sqlite::memory:`. */
export function sqliteFile(url: string): string | undefined {
  if (!url.startsWith('sqlite:')) return undefined;
  const path = sqlitePath(url);
  return path === ':memory:' ? undefined : resolve(path);
}

function sqlitePath(url: string): string {
  return url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
}

function openSqlite(url: string): Database {
  const path = sqlitePath(url);
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  switchToWal(() => sqlite.pragma('journal_mode = WAL'));
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // The CLI and a running server may write at the same time; wait instead of failing with SQLITE_BUSY.
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Tables>({
    dialect: new ImmediateTransactionsDialect({ database: withStatementCache(sqlite) }),
  });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

const WAL_TRIES = 20;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `enableWal` (the pragma that puts a file into WAL mode), again after a short pause while
 * SQLite answers SQLITE_BUSY, at most WAL_TRIES times (pauses of 5, 10, … ms: under 1 s in all).
 * Processes that open one new file at the same moment (replicas started together) each take the file's
 * exclusive lock for the switch, and SQLite answers SQLITE_BUSY at once, without the busy timeout, to
 * one whose wait could deadlock (sqlite.org, `sqlite3_busy_handler`); 1 of 640 such opens failed so,
 * 8 at a time, on a busy machine. Opening is synchronous, so the pause is too.
 */
export function switchToWal(
  enableWal: () => void,
  sleep: (ms: number) => void = (ms) => {
    Atomics.wait(pause, 0, 0, ms);
  },
): void {
  for (let attempt = 1; ; attempt++) {
    try {
      enableWal();
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || attempt === WAL_TRIES) throw error;
      sleep(5 * attempt);
    }
  }
}

/**
 * Kysely's SQLite dialect with `BEGIN IMMEDIATE` for transactions. A plain (deferred) `BEGIN` reads from a
 * snapshot and asks for the write lock only at its first write; if another process wrote in between
 * (another gateway worker, the CLI), SQLite refuses the upgrade at once with "database is locked"
 * (SQLITE_BUSY_SNAPSHOT: the busy timeout does not apply), failing a transaction that reads, then writes.
 * `BEGIN IMMEDIATE` takes the write lock first and waits for it within the busy timeout. The gateway's
 * transactions are short, and one process has only one SQLite connection, so nothing waits longer.
 *
 * Kysely's migrator also runs its migrations in such a transaction only when the adapter says SQLite
 * has transactional DDL (it has; Kysely's adapter says no). Without it, processes started together on
 * one new file (WORKERS, several services) all read "nothing applied" and create the same tables.
 */
class ImmediateTransactionsDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionsDriver(this.#config);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlAdapter();
  }
}

class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateTransactionsDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

function openPostgres(url: string, options: OpenDatabaseOptions): Database {
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new Error(`invalid PostgreSQL schema name "${options.schema}"`);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    // A database that does not answer should fail requests (503), not queue them forever.
    connectionTimeoutMillis: 5_000,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
    // Epoch-ms columns are BIGINT; parse them as numbers for this pool only, not process-wide.
    types: {
      getTypeParser: (oid: number, format?: string) =>
        oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text'),
    },
  });
  // pg emits 'error' on a client whose connection breaks. pg-pool listens only while the client is idle
  // in the pool; a client checked out (a query in flight, a transaction open) has no listener, and an
  // 'error' event without one kills the process. So every client gets a listener of its own for its
  // whole life. The failed query (or the next one on that client) rejects, the request answers 503
  // (docs/resilience.md) and the pool drops the client when it is released, as it is no longer queryable.
  const onConnectionError = options.onConnectionError ?? (() => {});
  pool.on('connect', (client) => client.on('error', onConnectionError));
  // The pool re-emits an idle client's error here; the client's own listener has reported it already.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', pgPool: pool, close: () => db.destroy() };
}

function parseInt8(text: string): number {
  return Number(text);
}
