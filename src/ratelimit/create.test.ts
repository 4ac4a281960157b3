import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { budgetsFrom, resolveRateLimitStore } from './create.js';

describe('choosing the rate-limit store', () => {
  const sqlite = { dialect: 'sqlite' } as const;
  const postgres = { dialect: 'postgres' } as const;
  const pgUrl = { DATABASE_URL: 'postgres://db/gateway' };

  it('auto: Redis when REDIS_URL is set', () => {
    expect(resolveRateLimitStore(loadConfig({ ...pgUrl, REDIS_URL: 'redis://r:6379' }), postgres)).toBe(
      'redis',
    );
  });

  it('auto: the database when it is PostgreSQL and there is no Redis', () => {
    expect(resolveRateLimitStore(loadConfig(pgUrl), postgres)).toBe('database');
  });

  it('auto: memory with SQLite and no Redis', () => {
    expect(resolveRateLimitStore(loadConfig({}), sqlite)).toBe('memory');
  });

  it('an explicit choice wins over auto', () => {
    expect(resolveRateLimitStore(loadConfig({ ...pgUrl, RATE_LIMIT_STORE: 'memory' }), postgres)).toBe(
      'memory',
    );
  });

  it('reads the test, live and failed API key budgets', () => {
    const config = loadConfig({ RATE_LIMIT_TEST_POINTS: '5', RATE_LIMIT_LIVE_WINDOW_SECONDS: '60' });
    expect(budgetsFrom(config)).toEqual({
      test: { points: 5, windowSeconds: 1 },
      live: { points: 100, windowSeconds: 60 },
      auth_failures: { points: 20, windowSeconds: 60 },
    });
  });
});
