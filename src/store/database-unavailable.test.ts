import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresUrl, warnSkipped } from '../../test/db.js';
import { isDatabaseUnavailable } from './database-unavailable.js';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['57P03', 'the database system is starting up'],
    ['57014', 'canceling statement due to statement timeout'],
    ['08006', 'connection failure'],
    ['08001', 'could not connect'],
    ['53300', 'sorry, too many clients already'],
    ['58030', 'could not write to file'],
  ])('counts PostgreSQL %s (%s)', (code, message) => {
    expect(isDatabaseUnavailable(withCode(code, message))).toBe(true);
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])(
    'counts the network error %s',
    (code) => {
      expect(isDatabaseUnavailable(withCode(code))).toBe(true);
    },
  );

  it.each([
    'SQLITE_BUSY',
    'SQLITE_BUSY_SNAPSHOT',
    'SQLITE_LOCKED',
    'SQLITE_IOERR',
    'SQLITE_IOERR_WRITE',
    'SQLITE_FULL',
    'SQLITE_CANTOPEN',
    'SQLITE_READONLY_DBMOVED',
  ])('counts the SQLite error %s', (code) => {
    expect(isDatabaseUnavailable(withCode(code))).toBe(true);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
  ])('counts node-postgres\'s code-less "%s"', (message) => {
    expect(isDatabaseUnavailable(new Error(message))).toBe(true);
  });

  it('follows cause chains and AggregateError members', () => {
    expect(isDatabaseUnavailable(new Error('order failed', { cause: withCode('57P01') }))).toBe(true);
    const aggregate = Object.assign(
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
      {
        code: undefined,
      },
    );
    expect(isDatabaseUnavailable(aggregate)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', withCode('23505')],
    ['a syntax error (42601)', withCode('42601')],
    ['a serialization failure (40001)', withCode('40001')],
    ['a SQLite constraint', withCode('SQLITE_CONSTRAINT_UNIQUE')],
    ['a SQLite schema error', withCode('SQLITE_ERROR')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a known message with a code of its own', withCode('E_OTHER', 'Connection terminated')],
    ['a non-error', 'Connection terminated unexpectedly'],
    ['null', null],
    ['a lowercase code that looks like a class', withCode('08abc')],
  ])('does not count %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('does not loop on a cause cycle', () => {
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    (first as { cause?: unknown }).cause = second;
    expect(isDatabaseUnavailable(first)).toBe(false);
  });
});

describe('isDatabaseUnavailable on real driver errors', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-unavailable-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('counts a real SQLITE_BUSY (another connection holds the write lock) but not a real constraint error', () => {
    const file = join(folder, 'busy.db');
    const holder = new SqliteDatabase(file);
    const other = new SqliteDatabase(file);
    try {
      holder.exec('create table t (id integer primary key)');
      other.pragma('busy_timeout = 0');
      holder.exec('begin immediate');
      const busy = catchError(() => other.exec('insert into t values (1)'));
      holder.exec('commit');
      expect((busy as { code?: string }).code).toBe('SQLITE_BUSY');
      expect(isDatabaseUnavailable(busy)).toBe(true);
      holder.exec('insert into t values (2)');
      expect(isDatabaseUnavailable(catchError(() => holder.exec('insert into t values (2)')))).toBe(false);
    } finally {
      holder.close();
      other.close();
    }
  });

  it('counts a real refused PostgreSQL connection', async () => {
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
    const error = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  const url = postgresUrl();
  if (url === undefined) {
    warnSkipped('TEST_DATABASE_URL', 'PostgreSQL');
    it.skip('skipped: TEST_DATABASE_URL is not set, so real PostgreSQL termination errors are not tested', () => {});
    return;
  }

  it('counts a real pg_terminate_backend of a query in flight, and the errors that follow', async () => {
    const victim = new pg.Client({ connectionString: url });
    const errors: unknown[] = [];
    victim.on('error', (error) => errors.push(error));
    await victim.connect();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const pid = (await victim.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      // A query that runs in the server until it is terminated below.
      const running = victim.query('select pg_sleep(30)').then(
        () => undefined,
        (e: unknown) => e,
      );
      // Only this test's own connection is terminated.
      await admin.query('select pg_terminate_backend($1)', [pid]);
      const inFlight = await running;
      expect((inFlight as { code?: string }).code).toBe('57P01');
      expect(isDatabaseUnavailable(inFlight)).toBe(true);
      const next = await victim.query('select 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isDatabaseUnavailable(next)).toBe(true);
      for (const error of errors) expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await victim.end().catch(() => {});
      await admin.end();
    }
  });

  it('counts a PostgreSQL syntax error as no outage', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const error = await client.query('selec 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as { code?: string }).code).toBe('42601');
      expect(isDatabaseUnavailable(error)).toBe(false);
    } finally {
      await client.end();
    }
  });
});

function catchError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
