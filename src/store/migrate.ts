import { type Kysely, type MigrationResult, type MigrationResultSet, Migrator, sql } from 'kysely';
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

/**
 * Kysely's migrator reads the tables of every schema in the database (its introspection), so a schema
 * or table that someone else drops or renames at that moment (another app on the same database, a
 * parallel test) fails it: 3F000 invalid_schema_name, 42P01 undefined_table or, for a column dropped
 * or renamed meanwhile, 42703 undefined_column, naming the other schema's object. A second look no
 * longer sees it: up to 3 tries.
 */
const TRIES = 3;

const VANISHED = new Set(['3F000', '42P01', '42703']);

function vanishedMeanwhile(error: unknown): boolean {
  return typeof error === 'object' && error !== null && VANISHED.has((error as { code?: string }).code ?? '');
}

/** Applies every pending migration (under Kysely's lock, so concurrent starts are safe); returns their names. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  let outcome: MigrationResultSet;
  for (let attempt = 1; ; attempt++) {
    outcome = await (await migratorFor(database)).migrateToLatest();
    if (attempt === TRIES || !vanishedMeanwhile(outcome.error)) break;
  }
  const { error, results } = outcome;
  if (error !== undefined) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? '(setup)'} failed: ${reason}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of migrations not yet applied. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const all = await (await migratorFor(database)).getMigrations();
      return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
    } catch (error) {
      if (attempt === TRIES || !vanishedMeanwhile(error)) throw error;
    }
  }
}
