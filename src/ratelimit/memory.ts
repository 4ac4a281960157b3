import { fromFlexible, memoryLimiterFor } from './flexible.js';
import type { Budgets, RateLimiter } from './rate-limiter.js';

/** Counts in this process only: right for one instance, wrong behind a load balancer. */
export function createMemoryRateLimiter(budgets: Budgets): RateLimiter {
  return fromFlexible(
    { test: memoryLimiterFor(budgets.test, 'test'), live: memoryLimiterFor(budgets.live, 'live') },
    budgets,
  );
}
