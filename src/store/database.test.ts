import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { openDatabase } from './database.js';

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
  },
  { only: 'postgres' },
);
