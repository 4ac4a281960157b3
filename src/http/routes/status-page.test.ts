import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import { describeWithRedis } from '../../../test/redis.js';
import { loadConfig } from '../../config.js';
import { createRateLimiter } from '../../ratelimit/create.js';

const TOKEN = 'status-token-0123456789';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('the operator status page', () => {
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    gw = await startGateway({
      database,
      env: { STATUS_PAGE_TOKEN: TOKEN, BREAKER_FAILURE_THRESHOLD: '1' },
    });
  });
  afterAll(async () => {
    await gw.close();
    await database.dispose();
  });

  const page = (authorization?: string, apiKey?: string) =>
    gw.inject({
      url: '/status',
      key: apiKey ?? null,
      credentials: null,
      headers: authorization === undefined ? {} : { authorization },
    });

  it('does not exist without STATUS_PAGE_TOKEN', async () => {
    const { app } = await buildTestApp(database);
    try {
      const response = await app.inject({ url: '/status' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ error: 'route_not_found' });
    } finally {
      await app.close();
    }
  });

  it("refuses a request without the token, or with a pharmacy's API key instead, and asks the browser for it", async () => {
    for (const response of [
      await page(),
      await page(undefined, gw.keys.live.secret),
      await page(`Bearer ${gw.keys.live.secret}`),
      await page(basic('admin', gw.keys.test.secret)),
      await page(basic('admin', `${TOKEN}x`)),
    ]) {
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: 'status_token_invalid', error_code: '1107' });
      expect(response.headers['www-authenticate']).toMatch(/^Basic realm="msv3-gateway status"/);
      expect(response.body).not.toContain('<html');
    }
  });

  it('shows each wholesaler called, up or down, and the dependencies, to the token', async () => {
    const call = (wholesaler: string) =>
      gw.inject({
        url: '/v1/availability',
        key: 'live',
        body: { wholesaler, items: [{ pzn: '04114918', quantity: 1 }] },
      });
    expect((await call('phoenix')).statusCode).toBe(200);
    expect((await call('offline')).statusCode).toBe(502);
    for (const authorization of [basic('anyone', TOKEN), `Bearer ${TOKEN}`]) {
      const response = await page(authorization);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['content-security-policy']).toContain("default-src 'none'");
      expect(response.headers['cache-control']).toBe('no-store');
      const html = response.body;
      expect(html).toMatch(/data-wholesaler="phoenix" data-route="live" data-state="up"/);
      expect(html).toMatch(/data-wholesaler="offline" data-route="live" data-state="down"/);
      expect(html).toContain('1 open (of 1)');
      expect(html).toMatch(/<th scope="row">Database<\/th><td><span class="badge up">up<\/span>/);
      expect(html).toContain('not used</span></td><td>rate limits are counted in memory or in the database');
      expect(html).toMatch(/0 waiting; delivery worker (running|stopped)/);
      expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    }
  });
});

describeWithRedis('the status page with rate limits in Redis', (redisUrl) => {
  it('says whether the Redis connection is up', async () => {
    const database = await createTestDatabase('sqlite');
    const config = loadConfig({ REDIS_URL: redisUrl, RATE_LIMIT_STORE: 'redis' });
    const rateLimiter = await createRateLimiter(config, database);
    const { app, close } = await buildTestApp(database, {
      env: { STATUS_PAGE_TOKEN: TOKEN, REDIS_URL: redisUrl, RATE_LIMIT_STORE: 'redis' },
      rateLimiter,
    });
    try {
      const response = await app.inject({ url: '/status', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.body).toMatch(
        /<th scope="row">Redis<\/th><td><span class="badge up">up<\/span><\/td><td>rate limits shared/,
      );
      const metrics = await app.inject({ url: '/metrics' });
      expect(metrics.body).toContain('msv3_gateway_redis_up 1');
    } finally {
      await close();
      await database.dispose();
    }
  });
});
