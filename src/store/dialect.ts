import { type Kysely, PostgresAdapter } from 'kysely';
import type { Dialect } from './database.js';

/** Which dialect a Kysely instance talks to; for migrations and queries that must differ. */
export function dialectOf(db: Kysely<unknown>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
