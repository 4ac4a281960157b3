import type { Config } from '../config.js';
import type { Database } from '../store/database.js';
import { createMemoryRateLimiter } from './memory.js';
import { createPostgresRateLimiter } from './postgres.js';
import type { Budgets, RateLimiter } from './rate-limiter.js';
import { createRedisRateLimiter } from './redis.js';

export type RateLimitStore = 'memory' | 'redis' | 'database';

/** `auto`: Redis if REDIS_URL is set, else the database if it is PostgreSQL, else memory. */
export function resolveRateLimitStore(config: Config, database: Pick<Database, 'dialect'>): RateLimitStore {
  const { store } = config.rateLimit;
  if (store !== 'auto') return store;
  if (config.redis.url !== undefined) return 'redis';
  return database.dialect === 'postgres' ? 'database' : 'memory';
}

export function budgetsFrom(config: Config): Budgets {
  const r = config.rateLimit;
  const a = config.apiKeys;
  return {
    test: { points: r.testPoints, windowSeconds: r.testWindowSeconds },
    live: { points: r.livePoints, windowSeconds: r.liveWindowSeconds },
    auth_failures: { points: a.failuresPerAddress, windowSeconds: a.failureWindowSeconds },
  };
}

/** The limiter the configuration asks for. */
export async function createRateLimiter(config: Config, database: Database): Promise<RateLimiter> {
  const budgets = budgetsFrom(config);
  switch (resolveRateLimitStore(config, database)) {
    case 'memory':
      return createMemoryRateLimiter(budgets);
    case 'redis':
      return createRedisRateLimiter(budgets, { url: config.redis.url! });
    case 'database':
      if (database.pgPool === undefined) throw new Error('RATE_LIMIT_STORE=database needs PostgreSQL');
      return createPostgresRateLimiter(budgets, database.pgPool);
  }
}
