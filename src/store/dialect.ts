import { type Kysely, PostgresAdapter } from 'kysely';
import type { Dialect } from './database.js';

/** Which dialect a Kysely instance talks to; for migrations and queries that must differ. */
export function dialectOf(db: Kysely<unknown>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A write that names a row another request deleted meanwhile (a foreign key points nowhere), on either
 * dialect: PostgreSQL's SQLSTATE 23503, SQLite's SQLITE_CONSTRAINT_FOREIGNKEY. Callers answer it as the
 * parent's 404, not as an unexpected error.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
