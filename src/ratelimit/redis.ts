import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { fromFlexible, memoryLimiterFor } from './flexible.js';
import type { Budget, BudgetName, Budgets, RateLimiter } from './rate-limiter.js';

export interface RedisRateLimiterOptions {
  url: string;
  /** Namespace of the counters; instances sharing a budget must use the same one. */
  keyPrefix?: string;
}

/**
 * Shares budgets through Redis. Connects before returning, so a wrong REDIS_URL fails start-up.
 * If Redis goes away later, each instance falls back to its own in-memory budget until it is back.
 */
export async function createRedisRateLimiter(
  budgets: Budgets,
  options: RedisRateLimiterOptions,
): Promise<RateLimiter> {
  const client = new Redis(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  client.on('error', () => {}); // reconnects on its own; requests meanwhile use the insurance limiter
  await client.connect();
  const prefix = options.keyPrefix ?? 'msv3:ratelimit';
  const limiter = (name: BudgetName, budget: Budget) =>
    new RateLimiterRedis({
      storeClient: client,
      points: budget.points,
      duration: budget.windowSeconds,
      keyPrefix: `${prefix}:${name}`,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memoryLimiterFor(budget, `insurance:${name}`),
    });
  return fromFlexible(limiter, budgets, async () => {
    await client.quit().catch(() => client.disconnect());
  });
}
