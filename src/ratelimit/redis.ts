import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { scrubPasswords, withoutPassword } from '../lib/url-password.js';
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
  let lastError: Error | undefined;
  // Reconnects on its own; requests meanwhile use the insurance limiter.
  client.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect(); // no reconnecting in the background of a failed start
    throw redisStartError(options.url, lastError ?? error);
  }
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
  const limiters = fromFlexible(limiter, budgets, async () => {
    await client.quit().catch(() => client.disconnect());
  });
  return { ...limiters, redisConnected: () => client.status === 'ready' };
}

/**
 * ioredis rejects `connect()` with a bare "Connection is closed."; the reason is in the last 'error'
 * event. Names the variable and the URL without its password, so the operator sees what to fix.
 */
export function redisStartError(url: string, cause: unknown): Error {
  const reason = scrubPasswords(cause instanceof Error ? cause.message : String(cause), url);
  return new Error(`REDIS_URL ${withoutPassword(url)}: Redis is not reachable (${reason})`, { cause });
}
