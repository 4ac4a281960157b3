import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { registerProbeRoutes } from '../../test/probe-routes.js';
import type { GatewayApp } from './types.js';

describe('rate limiting over HTTP', () => {
  let database: TestDatabase;
  let app: GatewayApp;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    ({ app } = await buildTestApp(database, {
      env: {
        RATE_LIMIT_TEST_POINTS: '3',
        RATE_LIMIT_TEST_WINDOW_SECONDS: '30',
        RATE_LIMIT_LIVE_POINTS: '5',
        RATE_LIMIT_LIVE_WINDOW_SECONDS: '30',
      },
      extraRoutes: [registerProbeRoutes],
    }));
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });

  const get = (key: string, url = '/v1/wholesalers') => app.inject({ url, headers: { 'x-api-key': key } });

  it('reports limit, remaining and reset on every keyed response, errors included', async () => {
    const { secret } = await createTestKey(database, 'test');
    const first = await get(secret);
    expect(first.headers).toMatchObject({
      'ratelimit-limit': '3',
      'ratelimit-remaining': '2',
      'ratelimit-reset': '30',
    });
    const invalid = await app.inject({
      method: 'POST',
      url: '/test/orders',
      headers: { 'x-api-key': secret },
      payload: { wholesaler: 'x', items: [] },
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.headers).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '1' });
  });

  it('answers 429 rate_limited with an integer Retry-After once the budget is spent', async () => {
    const { secret } = await createTestKey(database, 'test');
    for (let i = 0; i < 3; i++) expect((await get(secret)).statusCode).toBe(200);
    const limited = await get(secret);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(30);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.json()).toMatchObject({ error: 'rate_limited', error_code: '1400', wholesaler: null });
  });

  it('gives live keys their own, larger budget', async () => {
    const { secret } = await createTestKey(database, 'live');
    for (let i = 0; i < 5; i++) expect((await get(secret)).headers['ratelimit-limit']).toBe('5');
    expect((await get(secret)).statusCode).toBe(429);
  });

  it('keeps one key from spending another key\u2019s budget', async () => {
    const spent = await createTestKey(database, 'test');
    const fresh = await createTestKey(database, 'test');
    for (let i = 0; i < 4; i++) await get(spent.secret);
    expect((await get(fresh.secret)).statusCode).toBe(200);
  });

  it('leaves public routes unmetered', async () => {
    const response = await app.inject({ url: '/v1/health' });
    expect(response.headers['ratelimit-limit']).toBeUndefined();
  });

  it('does not charge requests whose key is refused', async () => {
    const { secret } = await createTestKey(database, 'test');
    // Another last character (never the key's own, which would leave the key valid 1 time in 62).
    const other = secret.endsWith('x') ? 'y' : 'x';
    await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': `${secret.slice(0, -1)}${other}` } });
    expect((await get(secret)).headers['ratelimit-remaining']).toBe('2');
  });
});
