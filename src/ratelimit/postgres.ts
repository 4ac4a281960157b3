import type pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { KeyMode } from '../store/api-key-secret.js';
import { fromFlexible, memoryLimiterFor } from './flexible.js';
import type { Budgets, RateLimiter } from './rate-limiter.js';

/**
 * Shares budgets through the gateway's PostgreSQL database (table `rate_limits`, created by the
 * library if missing, in the first schema of the search_path). The pool stays owned by the database.
 * If PostgreSQL fails, each instance falls back to its own in-memory budget.
 */
export async function createPostgresRateLimiter(budgets: Budgets, pool: pg.Pool): Promise<RateLimiter> {
  const limiter = (mode: KeyMode) =>
    new Promise<RateLimiterPostgres>((resolve, reject) => {
      const created: RateLimiterPostgres = new RateLimiterPostgres(
        {
          storeClient: pool,
          storeType: 'pool',
          tableName: 'rate_limits',
          points: budgets[mode].points,
          duration: budgets[mode].windowSeconds,
          keyPrefix: mode,
          insuranceLimiter: memoryLimiterFor(budgets[mode], `insurance:${mode}`),
        },
        (error?: Error) => (error ? reject(error) : resolve(created)),
      );
    });
  // One after the other: both create the same table, and concurrent CREATE TABLE IF NOT EXISTS can collide.
  const test = await limiter('test');
  const live = await limiter('live');
  return fromFlexible({ test, live }, budgets);
}
