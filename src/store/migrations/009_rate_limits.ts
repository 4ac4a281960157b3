import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * The table of the PostgreSQL rate-limit store (src/ratelimit/postgres.ts), in rate-limiter-flexible's
 * own layout. The library can create it, but gateways starting together on a new database then raced
 * to (`type "rate_limits" already exists`, and one of them exited); created here, under the
 * migrations' lock, it exists before any limiter starts. `IF NOT EXISTS`: databases where the library
 * already made it keep theirs. SQLite keeps its rate limits elsewhere (memory or Redis).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await db.schema
    .createTable('rate_limits')
    .ifNotExists()
    .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expire', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await db.schema.dropTable('rate_limits').ifExists().execute();
}
