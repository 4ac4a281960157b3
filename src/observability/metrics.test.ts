import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { registerProbeRoutes } from '../../test/probe-routes.js';
import type { GatewayApp } from '../http/types.js';
import { createMetrics } from './metrics.js';

describe('metrics', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(() => database.dispose());

  describe('without METRICS_TOKEN', () => {
    let app: GatewayApp;
    let key: string;
    beforeAll(async () => {
      ({ app } = await buildTestApp(database, { extraRoutes: [registerProbeRoutes] }));
      key = (await createTestKey(database)).secret;
    });
    afterAll(() => app.close());

    it('counts requests by route pattern, method and status, never by raw URL', async () => {
      await app.inject({ url: '/test/items/4711', headers: { 'x-api-key': key } });
      await app.inject({ url: '/test/items/4712', headers: { 'x-api-key': key } });
      await app.inject({ url: '/v1/no/such/path/123' });
      await app.inject({ url: '/v1/wholesalers' });
      const response = await app.inject({ url: '/metrics' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      const text = response.body;
      expect(text).toContain(
        'msv3_gateway_http_requests_total{method="GET",route="/test/items/:id",status="200"} 2',
      );
      expect(text).toContain(
        'msv3_gateway_http_requests_total{method="GET",route="unmatched",status="404"} 1',
      );
      expect(text).toContain(
        'msv3_gateway_http_requests_total{method="GET",route="/v1/wholesalers",status="401"} 1',
      );
      expect(text).toMatch(
        /msv3_gateway_http_request_duration_seconds_count\{method="GET",route="\/test\/items\/:id",status="200"\} 2/,
      );
      expect(text).not.toContain('4711');
      expect(text).not.toContain('/v1/no/such');
      expect(text).toContain('msv3_gateway_database_up 1');
    });

    it('keeps each app on its own registry', async () => {
      const other = await buildTestApp(database);
      await other.app.inject({ url: '/v1/health' });
      await other.app.inject({ url: '/v1/health' });
      const mine = (await app.inject({ url: '/metrics' })).body;
      const theirs = (await other.app.inject({ url: '/metrics' })).body;
      await other.app.close();
      expect(theirs).toContain(
        'msv3_gateway_http_requests_total{method="GET",route="/v1/health",status="200"} 2',
      );
      expect(mine).not.toContain('route="/v1/health"');
    });
  });

  it('answers only callers on this host when no METRICS_TOKEN is set', async () => {
    const { app } = await buildTestApp(database);
    try {
      for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
        expect((await app.inject({ url: '/metrics', remoteAddress })).statusCode, remoteAddress).toBe(200);
      }
      for (const remoteAddress of ['10.1.2.3', '192.168.0.7', '203.0.113.9', '2001:db8::1']) {
        const response = await app.inject({ url: '/metrics', remoteAddress });
        expect(response.statusCode, remoteAddress).toBe(401);
        expect(response.json()).toMatchObject({ error: 'metrics_token_invalid', error_code: '1105' });
      }
    } finally {
      await app.close();
    }
  });

  describe('with METRICS_TOKEN', () => {
    const token = 'metrics-token-0123456789';
    let app: GatewayApp;
    beforeAll(async () => {
      ({ app } = await buildTestApp(database, { env: { METRICS_TOKEN: token } }));
    });
    afterAll(() => app.close());

    it('refuses a request without the bearer token', async () => {
      const response = await app.inject({ url: '/metrics' });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: 'metrics_token_invalid', error_code: '1105' });
      expect(response.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    });

    it('refuses a wrong token', async () => {
      const response = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}x` } });
      expect(response.statusCode).toBe(401);
    });

    it('answers with the right token, also to other hosts', async () => {
      const response = await app.inject({
        url: '/metrics',
        remoteAddress: '10.1.2.3',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain('msv3_gateway_http_requests_total');
    });
  });

  it('adds process metrics only when asked', async () => {
    expect(await createMetrics().registry.metrics()).not.toContain('process_cpu');
    expect(await createMetrics({ processMetrics: true }).registry.metrics()).toContain('process_cpu');
  });
});
