import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { withStatementCache } from './sqlite-statements.js';

/** An in-memory database whose `prepare` calls are counted. */
function countedDatabase() {
  const database = new BetterSqlite3(':memory:');
  const prepared: string[] = [];
  const prepare = database.prepare.bind(database);
  database.prepare = ((text: string) => {
    prepared.push(text);
    return prepare(text);
  }) as typeof database.prepare;
  return { database, prepared };
}

describe('SQLite statements prepared once', () => {
  const open: BetterSqlite3.Database[] = [];
  afterEach(() => {
    for (const database of open.splice(0)) if (database.open) database.close();
  });

  it('prepares each SQL text once and gives the same answers through Kysely', async () => {
    const { database, prepared } = countedDatabase();
    open.push(database);
    const db = new Kysely<{ items: { id: number; name: string } }>({
      dialect: new SqliteDialect({ database: withStatementCache(database) }),
    });
    await sql`create table items (id integer primary key, name text not null)`.execute(db);
    for (let id = 1; id <= 5; id++)
      await db
        .insertInto('items')
        .values({ id, name: `item ${id}` })
        .execute();
    const names = [];
    for (let id = 1; id <= 5; id++)
      names.push((await db.selectFrom('items').select('name').where('id', '=', id).executeTakeFirst())?.name);
    expect(names).toEqual(['item 1', 'item 2', 'item 3', 'item 4', 'item 5']);
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('items').set({ name: 'renamed' }).where('id', '=', 2).execute();
    });
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('items').set({ name: 'again' }).where('id', '=', 3).execute();
    });
    const rows = await db.selectFrom('items').select(['id', 'name']).where('id', 'in', [2, 3]).execute();
    expect(rows).toEqual([
      { id: 2, name: 'renamed' },
      { id: 3, name: 'again' },
    ]);
    expect(new Set(prepared).size).toBe(prepared.length);
    expect(prepared.filter((text) => text.startsWith('insert'))).toHaveLength(1);
    expect(prepared.filter((text) => text.startsWith('update'))).toHaveLength(1);
    await db.destroy();
    expect(database.open).toBe(false);
  });

  it('keeps the most recently used statements up to its bound', () => {
    const { database, prepared } = countedDatabase();
    open.push(database);
    const cached = withStatementCache(database, 2);
    cached.prepare('select 1');
    cached.prepare('select 2');
    cached.prepare('select 1'); // now the most recent
    cached.prepare('select 3'); // "select 2" goes
    cached.prepare('select 1');
    cached.prepare('select 2');
    expect(prepared).toEqual(['select 1', 'select 2', 'select 3', 'select 2']);
  });

  it('gives a query of its own to a statement still iterating', () => {
    const { database, prepared } = countedDatabase();
    open.push(database);
    const cached = withStatementCache(database);
    const first = cached.prepare('select 1 as n union all select 2');
    const iterating = first.iterate([]);
    expect(iterating.next().value).toEqual({ n: 1 });
    const second = cached.prepare('select 1 as n union all select 2');
    expect(second).not.toBe(first);
    expect(second.all([])).toEqual([{ n: 1 }, { n: 2 }]);
    expect(iterating.next().value).toEqual({ n: 2 });
    iterating.return?.();
    expect(cached.prepare('select 1 as n union all select 2')).toBe(first);
    expect(prepared).toHaveLength(2);
  });
});
