import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { dialectOf } from './dialect.js';
import type { Tables } from './schema.js';

describeEachDialect('dialectOf', (getDatabase, dialect) => {
  it('names the dialect a Kysely instance talks to', () => {
    const database = getDatabase();
    expect(dialectOf(database.db as Kysely<unknown>)).toBe(dialect);
    expect(dialectOf(database.db as Kysely<unknown>)).toBe(database.dialect);
  });

  it('names the dialect inside a transaction too', async () => {
    // As `recordEvent` uses it: on the caller's transaction.
    const seen = await getDatabase()
      .db.transaction()
      .execute(async (trx: Kysely<Tables>) => dialectOf(trx as Kysely<unknown>));
    expect(seen).toBe(dialect);
  });
});
