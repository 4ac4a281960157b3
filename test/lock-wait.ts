import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../src/store/database.js';
import type { Tables } from '../src/store/schema.js';
import { until } from './until.js';

/**
 * Waits until a statement of another connection is blocked by the transaction `trx`, for tests that
 * show a statement waiting for a transaction to end. PostgreSQL: until a backend lists `trx`'s backend
 * among its blockers (`pg_blocking_pids`), so the wait is for the state itself, not for a time.
 * SQLite: one writer at a time, queued in this process, so a turn of the event loop is enough for a
 * statement that would not wait to have finished.
 */
export async function untilBlockedBy(
  dialect: Dialect,
  db: Kysely<Tables>,
  trx: Kysely<Tables>,
  what: string,
): Promise<void> {
  if (dialect === 'sqlite') {
    await new Promise((resolve) => setImmediate(resolve));
    return;
  }
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
  const holder = rows[0]!.pid;
  await until(
    what,
    async () => {
      const blocked = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity where ${holder} = any(pg_blocking_pids(pid))`.execute(
        db,
      );
      return blocked.rows[0]!.n > 0;
    },
    5_000,
    5,
  );
}
