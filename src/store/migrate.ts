import { type Kysely, type MigrationResult, Migrator, sql } from 'kysely';
import type { Database } from './database.js';
import { MIGRATIONS } from './migrations/index.js';

async function migratorFor(database: Database): Promise<Migrator> {
  const db = database.db as Kysely<unknown>;
  // Kysely looks for its bookkeeping tables in every schema unless told which one; another schema's
  // tables (another app, a parallel test) would then be mistaken for ours. Use the connection's schema.
  let migrationTableSchema: string | undefined;
  if (database.dialect === 'postgres') {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema;
  }
  return new Migrator({ db, migrationTableSchema, provider: { getMigrations: async () => MIGRATIONS } });
}

/** Applies every pending migration (under Kysely's lock, so concurrent starts are safe); returns their names. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const { error, results } = await (await migratorFor(database)).migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? '(setup)'} failed: ${reason}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of migrations not yet applied. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const all = await (await migratorFor(database)).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
