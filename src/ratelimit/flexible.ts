import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { KeyMode } from '../store/api-key-secret.js';
import type { Budget, Budgets, RateLimitDecision, RateLimiter } from './rate-limiter.js';

/** Adapts one rate-limiter-flexible limiter per mode to our `RateLimiter`. */
export function fromFlexible(
  limiters: Record<KeyMode, RateLimiterAbstract>,
  budgets: Budgets,
  close: () => Promise<void> = async () => {},
): RateLimiter {
  return {
    async consume(key, mode) {
      const limit = budgets[mode].points;
      try {
        return decision(true, limit, await limiters[mode].consume(key, 1));
      } catch (outcome) {
        if (outcome instanceof RateLimiterRes) return decision(false, limit, outcome);
        throw outcome;
      }
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
