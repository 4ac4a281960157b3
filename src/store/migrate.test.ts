import { type DatabaseMetadataOptions, sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabase, describeEachDialect } from '../../test/db.js';
import type { Database } from './database.js';
import { migrateToLatest, pendingMigrations } from './migrate.js';
import { MIGRATIONS } from './migrations/index.js';

describeEachDialect('migrations', (getDatabase) => {
  it('leaves nothing pending after start-up migration', async () => {
    expect(await pendingMigrations(getDatabase())).toEqual([]);
  });

  it('applies nothing when run again', async () => {
    expect(await migrateToLatest(getDatabase())).toEqual([]);
  });

  it('records every listed migration once', async () => {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
      getDatabase().db,
    );
    expect(rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS));
  });

  it('creates accounts and api_keys with a unique hash and a cascading account reference', async () => {
    const { db } = getDatabase();
    await db.insertInto('accounts').values({ id: 'acct_m', name: 'm', created_at: 1 }).execute();
    const key = {
      account_id: 'acct_m',
      name: 'k',
      mode: 'test' as const,
      hash: 'h',
      prefix: 'p',
      last4: 'l',
      created_at: 1,
    };
    await db
      .insertInto('api_keys')
      .values({ id: 'key_m1', ...key })
      .execute();
    await expect(
      db
        .insertInto('api_keys')
        .values({ id: 'key_m2', ...key })
        .execute(),
    ).rejects.toThrow();
    await expect(
      db
        .insertInto('api_keys')
        .values({ id: 'key_m3', ...key, hash: 'h3', account_id: 'acct_missing' })
        .execute(),
    ).rejects.toThrow();
    await db.deleteFrom('accounts').where('id', '=', 'acct_m').execute();
    expect(await db.selectFrom('api_keys').where('id', '=', 'key_m1').selectAll().execute()).toEqual([]);
  });

  it('refuses a key mode other than test or live', async () => {
    const { db } = getDatabase();
    await db.insertInto('accounts').values({ id: 'acct_mode', name: 'm', created_at: 1 }).execute();
    const row = {
      id: 'key_x',
      account_id: 'acct_mode',
      name: 'k',
      hash: 'hx',
      prefix: 'p',
      last4: 'l',
      created_at: 1,
    };
    await expect(
      db
        .insertInto('api_keys')
        .values({ ...row, mode: 'prod' as 'test' })
        .execute(),
    ).rejects.toThrow();
  });
});

describeEachDialect(
  'migrations beside another schema',
  (getDatabase) => {
    it("keeps to its own schema when another one already holds Kysely's tables", async () => {
      // getDatabase() was migrated into its own schema; this one starts after it, beside its tables.
      expect(await pendingMigrations(getDatabase())).toEqual([]);
      const second = await createTestDatabase('postgres');
      try {
        expect(await pendingMigrations(second)).toEqual([]);
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from api_keys`.execute(second.db);
        expect(rows[0]?.n).toBe(0);
      } finally {
        await second.dispose();
      }
    });

    it.each([
      ['a schema', '3F000', 'schema "test_gone" does not exist'],
      ['a table', '42P01', 'relation "test_gone.webhook_attempts_away" does not exist'],
      ['a column', '42703', 'column "document" of relation "sandbox_tenants" does not exist'],
    ])(
      'looks again when %s it was reading is dropped or renamed by someone else meanwhile',
      async (_, code, message) => {
        // Kysely's look at the tables of every schema fails as PostgreSQL has it fail when another schema
        // is dropped, or another schema's table renamed, during it; the next look succeeds.
        const { database, arm, vanished } = vanishingOnce(getDatabase(), code, message);
        arm();
        expect(await pendingMigrations(database)).toEqual([]);
        arm();
        expect(await migrateToLatest(database)).toEqual([]);
        expect(vanished()).toBe(2);
      },
    );
  },
  { only: 'postgres' },
);

/**
 * `database`, whose first look at the tables of every schema (Kysely's introspection, which the
 * migrator uses) after each `arm()` fails with PostgreSQL's error `code` and `message`.
 */
function vanishingOnce(database: Database, code: string, message: string) {
  let armed = false;
  let vanished = 0;
  const real = database.db;
  const introspection = {
    getSchemas: () => real.introspection.getSchemas(),
    getMetadata: (options?: DatabaseMetadataOptions) => real.introspection.getMetadata(options),
    getTables: (options?: DatabaseMetadataOptions) => {
      if (!armed) return real.introspection.getTables(options);
      armed = false;
      vanished++;
      return Promise.reject(Object.assign(new Error(message), { code }));
    },
  };
  const db = new Proxy(real, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    database: { ...database, db },
    arm: () => {
      armed = true;
    },
    vanished: () => vanished,
  };
}
