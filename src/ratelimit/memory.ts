import { fromFlexible, memoryLimiterFor } from './flexible.js';
import type { Budgets, RateLimiter } from './rate-limiter.js';

/** Counts in this process only: right for one instance, wrong behind a load balancer. */
export function createMemoryRateLimiter(budgets: Budgets): RateLimiter {
  return fromFlexible((name, budget) => memoryLimiterFor(budget, name), budgets);
}
