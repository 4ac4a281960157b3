import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import {
  allBudgets,
  type Budget,
  type BudgetName,
  type Budgets,
  type RateLimitDecision,
  type RateLimiter,
} from './rate-limiter.js';

/** Adapts one rate-limiter-flexible limiter per budget to our `RateLimiter`. */
export function fromFlexible(
  limiterFor: (name: BudgetName, budget: Budget) => RateLimiterAbstract,
  budgets: Budgets,
  close: () => Promise<void> = async () => {},
): RateLimiter {
  const all = allBudgets(budgets);
  const limiters: Record<BudgetName, RateLimiterAbstract> = {
    test: limiterFor('test', all.test),
    live: limiterFor('live', all.live),
    auth_failures: limiterFor('auth_failures', all.auth_failures),
  };
  return {
    // One promise chain, no async function around it: this runs on every keyed request.
    consume(key, budget) {
      const limit = all[budget].points;
      return limiters[budget].consume(key, 1).then(
        (res) => decision(true, limit, res),
        (outcome: unknown) => {
          if (outcome instanceof RateLimiterRes) return decision(false, limit, outcome);
          throw outcome;
        },
      );
    },
    async peek(key, budget) {
      const limit = all[budget].points;
      const state = await limiters[budget].get(key);
      if (state === null) return { allowed: true, limit, remaining: limit, resetSeconds: 0 };
      return decision(state.consumedPoints < limit, limit, state);
    },
    close,
  };
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): RateLimitDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
  };
}

export function memoryLimiterFor(budget: Budget, keyPrefix: string): RateLimiterMemory {
  return new RateLimiterMemory({ points: budget.points, duration: budget.windowSeconds, keyPrefix });
}
