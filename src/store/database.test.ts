import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { until } from '../../test/until.js';
import { type Database, openDatabase, switchToWal } from './database.js';
import { isDatabaseUnavailable } from './database-unavailable.js';
import type { Tables } from './schema.js';

/** A function that always throws `error`, and how often it was called. */
function throwing(error: Error): { run: () => never; calls: () => number } {
  let calls = 0;
  return {
    run: () => {
      calls++;
      throw error;
    },
    calls: () => calls,
  };
}

describe('openDatabase on SQLite', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-db-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('creates the parent folder and turns on WAL and foreign keys', async () => {
    const file = join(folder, 'nested', 'deeper', 'gateway.db');
    const database = await openDatabase(`sqlite:${file}`);
    try {
      expect(database.dialect).toBe('sqlite');
      expect(existsSync(file)).toBe(true);
      const { rows: journal } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(database.db);
      expect(journal[0]?.journal_mode).toBe('wal');
      const { rows: keys } = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(database.db);
      expect(keys[0]?.foreign_keys).toBe(1);
    } finally {
      await database.close();
    }
  });

  it('lets a transaction that reads, then writes, wait for another process writing the same file', async () => {
    const file = join(folder, 'two-processes.db');
    const database = await openDatabase(`sqlite:${file}`);
    await sql`create table counters (id integer primary key, n integer not null)`.execute(database.db);
    await sql`insert into counters (id, n) values (1, 0), (2, 0)`.execute(database.db);
    // Another process (a second gateway worker) commits a write every millisecond for two seconds.
    const writer = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import Database from 'better-sqlite3';
         const db = new Database(${JSON.stringify(file)});
         db.pragma('busy_timeout = 5000');
         const bump = db.prepare('update counters set n = n + 1 where id = 2');
         const until = Date.now() + 2000;
         console.log('writing');
         while (Date.now() < until) { bump.run(); await new Promise((r) => setTimeout(r, 1)); }`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => writer.once('exit', resolve));
    try {
      await Promise.race([new Promise((resolve) => writer.stdout.once('data', resolve)), exited]);
      expect(writer.exitCode).toBeNull();
      const failures: string[] = [];
      for (let i = 0; i < 40; i++) {
        await database.db
          .transaction()
          .execute(async (trx) => {
            const { rows } = await sql<{ n: number }>`select n from counters where id = 1`.execute(trx);
            // Something awaited between the read and the write: a window for the other process's writes.
            await delay(5);
            await sql`update counters set n = ${rows[0]!.n + 1} where id = 1`.execute(trx);
          })
          .catch((error: Error) => failures.push(error.message));
      }
      expect(failures).toEqual([]);
      const { rows } = await sql<{ n: number }>`select n from counters where id = 1`.execute(database.db);
      expect(rows[0]!.n).toBe(40);
    } finally {
      await exited;
      await database.close();
    }
  }, 30_000);

  it('tries the switch to WAL again while SQLite answers SQLITE_BUSY, and gives up on anything else', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const pauses: number[] = [];
    let calls = 0;
    switchToWal(
      () => {
        if (++calls < 3) throw busy;
      },
      (ms) => {
        pauses.push(ms);
      },
    );
    expect([calls, pauses]).toEqual([3, [5, 10]]);

    const alwaysBusy = throwing(busy);
    expect(() => switchToWal(alwaysBusy.run, () => {})).toThrow('database is locked');
    expect(alwaysBusy.calls()).toBe(20);

    const readOnly = throwing(
      Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' }),
    );
    expect(() => switchToWal(readOnly.run, () => {})).toThrow('readonly');
    expect(readOnly.calls()).toBe(1);
  });

  it('opens an in-memory database', async () => {
    const database = await openDatabase('sqlite::memory:');
    await database.close();
    expect(existsSync(':memory:')).toBe(false);
  });
});

describeEachDialect(
  'openDatabase on PostgreSQL',
  (getDatabase) => {
    it('parses BIGINT as a number on its own pool only, leaving pg defaults alone', async () => {
      const database = getDatabase();
      expect(database.dialect).toBe('postgres');
      const { rows } = await sql<{ big: unknown }>`select 1700000000000::bigint as big`.execute(database.db);
      expect(rows[0]?.big).toBe(1_700_000_000_000);
      expect(pg.types.getTypeParser(20, 'text')('5')).toBe('5');
    });

    it('keeps each test schema on the search_path of every pooled connection', async () => {
      const database = getDatabase();
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          sql<{ schema: string }>`select current_schema() as schema`.execute(database.db),
        ),
      );
      for (const { rows } of results) expect(rows[0]?.schema).toBe(database.schema);
    });

    it('fails fast when the server cannot be reached', async () => {
      await expect(openDatabase('postgres://postgres@127.0.0.1:1/test')).rejects.toThrow();
    });

    /** This test's own pool (only its connections are terminated) and a separate admin connection. */
    async function withOwnPool(
      body: (database: Database, terminate: (pid: number) => Promise<void>, lost: Error[]) => Promise<void>,
    ): Promise<void> {
      const { url } = getDatabase();
      const lost: Error[] = [];
      const database = await openDatabase(url, { maxConnections: 2, onConnectionError: (e) => lost.push(e) });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await body(
          database,
          async (pid) => void (await admin.query('select pg_terminate_backend($1)', [pid])),
          lost,
        );
      } finally {
        await admin.end();
        await database.close();
      }
    }

    const backendPid = async (db: Kysely<Tables>) =>
      (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;

    it('survives a connection terminated inside an open transaction: the transaction fails as unavailable', async () => {
      await withOwnPool(async (database, terminate, lost) => {
        const failure = await database.db
          .transaction()
          .execute(async (trx) => {
            await terminate(await backendPid(trx));
            // Idle in the transaction while the server's FATAL and the closed socket arrive: without a
            // listener of its own, the checked-out client's 'error' event would end the process here.
            await until('the lost connection reported', () => lost.length > 0, 5_000, 10);
            await sql`select 1`.execute(trx);
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(isDatabaseUnavailable(failure)).toBe(true);
        expect(lost.length).toBeGreaterThan(0);
        // The dead connection left the pool; the next query gets a new one.
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
        expect(rows[0]?.one).toBe(1);
      });
    });

    it('reports an idle pooled connection that is terminated, and replaces it', async () => {
      await withOwnPool(async (database, terminate, lost) => {
        const pid = await backendPid(database.db);
        await terminate(pid);
        await until('the lost connection reported', () => lost.length > 0, 5_000, 10);
        expect(lost.map((e) => (e as { code?: string }).code ?? e.message)).toContain('57P01');
        expect(await backendPid(database.db)).not.toBe(pid);
      });
    });
  },
  { only: 'postgres' },
);
