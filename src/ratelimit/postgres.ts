import type pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { fromFlexible, memoryLimiterFor } from './flexible.js';
import { allBudgets, type Budget, type BudgetName, type Budgets, type RateLimiter } from './rate-limiter.js';

/**
 * Shares budgets through the gateway's PostgreSQL database (table `rate_limits`, created by migration
 * 009, so the library does not create it: gateways starting together raced to). The pool stays owned
 * by the database.
 * If PostgreSQL fails, each instance falls back to its own in-memory budget.
 */
export async function createPostgresRateLimiter(budgets: Budgets, pool: pg.Pool): Promise<RateLimiter> {
  const limiter = (name: BudgetName, budget: Budget) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      points: budget.points,
      duration: budget.windowSeconds,
      keyPrefix: name,
      insuranceLimiter: memoryLimiterFor(budget, `insurance:${name}`),
    });
  const all = allBudgets(budgets);
  const ready = {
    test: limiter('test', all.test),
    live: limiter('live', all.live),
    auth_failures: limiter('auth_failures', all.auth_failures),
  };
  return fromFlexible((name) => ready[name], budgets);
}
