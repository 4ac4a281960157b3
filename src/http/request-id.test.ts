import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { createLogger } from '../observability/logger.js';
import type { GatewayApp } from './types.js';

describe('request ids', () => {
  let database: TestDatabase;
  let app: GatewayApp;
  const lines: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => lines.push(line) },
    });
    ({ app } = await buildTestApp(database, { logger }));
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });

  it('generates a req_ id when none is sent', async () => {
    const response = await app.inject({ url: '/v1/health' });
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
  });

  it('generates a different id for every request', async () => {
    const ids = await Promise.all(
      [1, 2, 3].map(async () => (await app.inject({ url: '/v1/health' })).headers['x-request-id']),
    );
    expect(new Set(ids).size).toBe(3);
  });

  it('keeps a safe incoming X-Request-Id, on success and on error', async () => {
    const ok = await app.inject({ url: '/v1/health', headers: { 'x-request-id': 'client-42:a.b_c' } });
    expect(ok.headers['x-request-id']).toBe('client-42:a.b_c');
    const failed = await app.inject({ url: '/v1/wholesalers', headers: { 'x-request-id': 'trace-7' } });
    expect(failed.headers['x-request-id']).toBe('trace-7');
    expect(failed.json().request_id).toBe('trace-7');
  });

  it('replaces an unsafe or overlong incoming id', async () => {
    for (const unsafe of ['has space', 'semi;colon', '<script>', 'x'.repeat(129)]) {
      const response = await app.inject({ url: '/v1/health', headers: { 'x-request-id': unsafe } });
      expect(response.headers['x-request-id']).toMatch(/^req_/);
    }
  });

  it('labels log lines with the request id', async () => {
    lines.length = 0;
    await app.inject({ url: '/v1/health', headers: { 'x-request-id': 'log-me-123' } });
    const completed = lines.map((l) => JSON.parse(l)).find((entry) => entry.msg === 'request completed');
    expect(completed).toMatchObject({
      request_id: 'log-me-123',
      req: { method: 'GET', url: '/v1/health', route: '/v1/health' },
      res: { status: 200 },
    });
  });
});
