import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from '../../test/db.js';
import { describeWithRedis } from '../../test/redis.js';
import type { GatewayApp } from '../http/types.js';
import { generateApiKey } from '../store/api-key-secret.js';
import { createMemoryRateLimiter } from './memory.js';
import { createPostgresRateLimiter } from './postgres.js';
import type { RateLimiter } from './rate-limiter.js';
import { createRedisRateLimiter } from './redis.js';

const env = { RATE_LIMIT_TEST_POINTS: '4', RATE_LIMIT_TEST_WINDOW_SECONDS: '30' };
const budgets = {
  test: { points: 4, windowSeconds: 30 },
  live: { points: 8, windowSeconds: 30 },
  auth_failures: { points: 3, windowSeconds: 30 },
};

/** Sends `count` requests alternating between the two apps; returns their status codes. */
async function alternate(apps: GatewayApp[], key: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await apps[i % apps.length]!.inject({
      url: '/v1/wholesalers',
      headers: { 'x-api-key': key },
    });
    statuses.push(response.statusCode);
  }
  return statuses;
}

/**
 * Sends `count` never-issued keys alternating between the two apps, from a client address of its own (the
 * other tests' keys are not held up by its failures); returns their status codes.
 */
async function unknownKeys(apps: GatewayApp[], count: number, remoteAddress: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await apps[i % apps.length]!.inject({
      url: '/v1/wholesalers',
      headers: { 'x-api-key': generateApiKey('test') },
      remoteAddress,
    });
    statuses.push(response.statusCode);
  }
  return statuses;
}

async function twoApps(database: TestDatabase, limiters: [RateLimiter, RateLimiter]): Promise<GatewayApp[]> {
  const other = await database.openAnother();
  return [
    (await buildTestApp(database, { env, rateLimiter: limiters[0] })).app,
    (await buildTestApp(other, { env, rateLimiter: limiters[1] })).app,
  ];
}

describeEachDialect('two instances with in-memory limiters', (getDatabase) => {
  it('do not share a budget (why a shared store is needed)', async () => {
    const apps = await twoApps(getDatabase(), [
      createMemoryRateLimiter(budgets),
      createMemoryRateLimiter(budgets),
    ]);
    const { secret } = await createTestKey(getDatabase());
    expect(await alternate(apps, secret, 8)).toEqual(Array(8).fill(200));
    await Promise.all(apps.map((app) => app.close()));
  });
});

describeEachDialect(
  'two instances on one PostgreSQL database',
  (getDatabase) => {
    let limiters: RateLimiter[] = [];
    let apps: GatewayApp[] = [];
    beforeAll(async () => {
      const database = getDatabase();
      const other = await database.openAnother();
      limiters = [
        await createPostgresRateLimiter(budgets, database.pgPool!),
        await createPostgresRateLimiter(budgets, other.pgPool!),
      ];
      apps = [
        (await buildTestApp(database, { env, rateLimiter: limiters[0] })).app,
        (await buildTestApp(other, { env, rateLimiter: limiters[1] })).app,
      ];
    });
    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
    });

    it('enforce one budget per key', async () => {
      const { secret } = await createTestKey(getDatabase());
      expect(await alternate(apps, secret, 6)).toEqual([200, 200, 200, 200, 429, 429]);
    });

    it('share the failed API key budget of a client address', async () => {
      expect(await unknownKeys(apps, 5, '198.51.100.7')).toEqual([401, 401, 401, 429, 429]);
    });

    it('fall back to a per-instance budget when PostgreSQL is gone', async () => {
      const doomed = await getDatabase().openAnother();
      const limiter = await createPostgresRateLimiter(budgets, doomed.pgPool!);
      await doomed.close();
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push((await limiter.consume('key_offline', 'test')).allowed);
      expect(decisions).toEqual([true, true, true, true, false]);
    });

    it('report the shared remaining budget from either instance', async () => {
      const { secret } = await createTestKey(getDatabase());
      await alternate(apps, secret, 1);
      const response = await apps[1]!.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': secret } });
      expect(response.headers['ratelimit-remaining']).toBe('2');
    });
  },
  { only: 'postgres' },
);

describeWithRedis('two instances on one Redis', (redisUrl) => {
  let database: TestDatabase;
  let limiters: RateLimiter[] = [];
  let apps: GatewayApp[] = [];
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const keyPrefix = `msv3-test:${randomBytes(6).toString('hex')}`;
    limiters = [
      await createRedisRateLimiter(budgets, { url: redisUrl, keyPrefix }),
      await createRedisRateLimiter(budgets, { url: redisUrl, keyPrefix }),
    ];
    apps = await twoApps(database, [limiters[0]!, limiters[1]!]);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await Promise.all(limiters.map((limiter) => limiter.close()));
    await database.dispose();
  });

  it('enforce one budget per key', async () => {
    const { secret } = await createTestKey(database);
    expect(await alternate(apps, secret, 6)).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('share the failed API key budget of a client address', async () => {
    expect(await unknownKeys(apps, 5, '198.51.100.8')).toEqual([401, 401, 401, 429, 429]);
  });

  it('falls back to a per-instance budget when Redis is gone', async () => {
    const limiter = await createRedisRateLimiter(budgets, { url: redisUrl, keyPrefix: 'msv3-test:gone' });
    await limiter.close();
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push((await limiter.consume('key_offline', 'test')).allowed);
    expect(decisions).toEqual([true, true, true, true, false]);
  });

  it('refuses to start when Redis cannot be reached', async () => {
    await expect(createRedisRateLimiter(budgets, { url: 'redis://127.0.0.1:1' })).rejects.toThrow();
  });
});
