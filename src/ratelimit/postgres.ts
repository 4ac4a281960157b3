import type pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { fromFlexible, memoryLimiterFor } from './flexible.js';
import { allBudgets, type Budget, type BudgetName, type Budgets, type RateLimiter } from './rate-limiter.js';

/**
 * Shares budgets through the gateway's PostgreSQL database (table `rate_limits`, created by the
 * library if missing, in the first schema of the search_path). The pool stays owned by the database.
 * If PostgreSQL fails, each instance falls back to its own in-memory budget.
 */
export async function createPostgresRateLimiter(budgets: Budgets, pool: pg.Pool): Promise<RateLimiter> {
  const limiter = (name: BudgetName, budget: Budget) =>
    new Promise<RateLimiterPostgres>((resolve, reject) => {
      const created: RateLimiterPostgres = new RateLimiterPostgres(
        {
          storeClient: pool,
          storeType: 'pool',
          tableName: 'rate_limits',
          points: budget.points,
          duration: budget.windowSeconds,
          keyPrefix: name,
          insuranceLimiter: memoryLimiterFor(budget, `insurance:${name}`),
        },
        (error?: Error) => (error ? reject(error) : resolve(created)),
      );
    });
  // One after the other: all create the same table, and concurrent CREATE TABLE IF NOT EXISTS can collide.
  const all = allBudgets(budgets);
  const ready = {
    test: await limiter('test', all.test),
    live: await limiter('live', all.live),
    auth_failures: await limiter('auth_failures', all.auth_failures),
  };
  return fromFlexible((name) => ready[name], budgets);
}
