import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type Database, type Dialect, openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';

/**
 * Fresh, migrated databases for tests, on both dialects.
 *
 * ```ts
 * describeEachDialect('api keys repository', (getDatabase) => {
 *   it('finds a key by its hash', async () => {
 *     const { db } = getDatabase();
 *     // …use the repository functions on `db`
 *   });
 * });
 * ```
 *
 * The suite body runs once per dialect, in a `describe` named `<name> [sqlite]` / `<name> [postgres]`:
 * SQLite in a temporary folder, PostgreSQL on `TEST_DATABASE_URL` in a fresh schema (every pooled
 * connection gets `search_path=<schema>`), dropped afterwards. All tests of one block share that one
 * database (created in `beforeAll`), so write tests that do not depend on each other's rows, or call
 * `createTestDatabase(dialect)` yourself for a private one. Without `TEST_DATABASE_URL` the PostgreSQL
 * block holds a single skipped test whose name says why, and a warning is printed.
 * `{ only: 'postgres' }` runs a suite for one dialect (e.g. a PostgreSQL-only feature).
 * New tables need nothing here: the helper runs every migration in `src/store/migrations/index.ts`.
 */
export function describeEachDialect(
  name: string,
  suite: (getDatabase: () => TestDatabase, dialect: Dialect) => void,
  options: { only?: Dialect } = {},
): void {
  const dialects: Dialect[] = options.only === undefined ? ['sqlite', 'postgres'] : [options.only];
  for (const dialect of dialects) {
    describe(`${name} [${dialect}]`, () => {
      if (dialect === 'postgres' && postgresUrl() === undefined) {
        warnSkipped('TEST_DATABASE_URL', 'PostgreSQL');
        it.skip('skipped: TEST_DATABASE_URL is not set, so PostgreSQL is not tested', () => {});
        return;
      }
      let database: TestDatabase | undefined;
      beforeAll(async () => {
        database = await createTestDatabase(dialect);
      });
      afterAll(async () => {
        await database?.dispose();
      });
      suite(() => {
        if (database === undefined)
          throw new Error('test database not ready (use getDatabase() inside a test)');
        return database;
      }, dialect);
    });
  }
}

export interface TestDatabase extends Database {
  /** The URL to open it again (PostgreSQL: together with `schema`). */
  readonly url: string;
  readonly schema?: string;
  /** A second, independent handle on the same data, e.g. for a second app instance. Closed by `dispose`. */
  openAnother(): Promise<Database>;
  /** Closes every handle and deletes the data (temp folder or schema). */
  dispose(): Promise<void>;
}

export function postgresUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined;
}

/** A fresh migrated database; the caller disposes it. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-test-'));
    const url = `sqlite:${join(folder, 'gateway.db')}`;
    return track(await openDatabase(url), { url }, () => rmSync(folder, { recursive: true, force: true }));
  }
  const url = postgresUrl();
  if (url === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await adminQuery(url, `create schema ${schema}`);
  const dropSchema = () =>
    whileHolding(url, 'exclusive', () => adminQuery(url, `drop schema ${schema} cascade`));
  const main = await openDatabase(url, { schema, maxConnections: 5 }).catch(async (error: unknown) => {
    await dropSchema().catch(() => {});
    throw error;
  });
  try {
    return await whileHolding(url, 'shared', () =>
      track(main, { url, schema }, dropSchema, { cleanUpOnFailure: false }),
    );
  } catch (error) {
    // Dropped once the shared lock is released: taking the exclusive lock while this process still
    // holds the shared one would wait for itself forever.
    await dropSchema().catch(() => {});
    throw error;
  }
}

/**
 * Kysely's migrator looks for its tables with a query over every schema of the database, which asks
 * `has_schema_privilege` of each: a schema another test drops meanwhile then fails it (`schema "test_…"
 * does not exist`). Migrations of test schemas hold this lock shared, drops exclusive, so they never
 * overlap. An advisory lock of the server, on a connection of its own.
 */
const SCHEMA_LOCK = 7_304_611;

async function whileHolding<T>(
  url: string,
  mode: 'shared' | 'exclusive',
  work: () => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      mode === 'shared' ? 'select pg_advisory_lock_shared($1)' : 'select pg_advisory_lock($1)',
      [SCHEMA_LOCK],
    );
    return await work();
  } finally {
    await client.end(); // ends the session, and with it the lock
  }
}

/**
 * A fresh, empty PostgreSQL database on the server of `TEST_DATABASE_URL`, for tests that hand a plain
 * `DATABASE_URL` to another process (which cannot be given a schema). `dispose` drops it, cutting any
 * connection still open. Migrate it yourself (or let `serve` do it).
 */
export async function createScratchPostgresDatabase(): Promise<{ url: string; dispose(): Promise<void> }> {
  const base = postgresUrl();
  if (base === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const name = `test_${randomBytes(6).toString('hex')}`;
  await adminQuery(base, `create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dispose: () => adminQuery(base, `drop database if exists ${name} with (force)`),
  };
}

async function track(
  main: Database,
  where: { url: string; schema?: string },
  cleanUp: () => unknown,
  options = { cleanUpOnFailure: true },
): Promise<TestDatabase> {
  try {
    await migrateToLatest(main);
  } catch (error) {
    await main.close();
    if (options.cleanUpOnFailure) await cleanUp();
    throw error;
  }
  const handles: Database[] = [main];
  return {
    ...main,
    ...where,
    async openAnother() {
      const another = await openDatabase(where.url, { schema: where.schema, maxConnections: 5 });
      handles.push(another);
      return another;
    },
    async dispose() {
      await Promise.all(handles.map((h) => h.close().catch(() => {})));
      await cleanUp();
    },
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const warned = new Set<string>();

/** Prints once per test file why a dependency's tests are skipped. */
export function warnSkipped(variable: string, what: string): void {
  if (warned.has(variable)) return;
  warned.add(variable);
  console.warn(`[tests] ${variable} is not set: ${what} tests are skipped (see README, "npm test").`);
}
