import { type Kysely, sql } from 'kysely';
import type { Tables } from './schema.js';

/** The database's answer to `select 1` within `timeoutMs`: whether it came, and how long it took. */
export async function pingDatabase(
  db: Kysely<Tables>,
  timeoutMs: number,
): Promise<{ up: boolean; latencyMs: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answered = sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
  const up = await Promise.race([answered, timeout]).finally(() => clearTimeout(timer));
  return { up, latencyMs: performance.now() - started };
}
