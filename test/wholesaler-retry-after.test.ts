import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './db.js';
import { type Gateway, startGateway } from './gateway.js';

/**
 * A wholesaler (or the proxy in front of it) that answers an HTTP error often says when to come back.
 * The gateway passes that on as Retry-After wherever retrying helps (408, 429, 5xx), within bounds, and
 * says nothing for a status that repeats on every attempt: a 503 as 503 wholesaler_unavailable, the
 * others as 502 wholesaler_http_error. A hand-made loopback
 * wholesaler per behaviour, registered as a custom wholesaler (ALLOW_PRIVATE_ENDPOINTS=true).
 */

const ANSWERS: Record<string, { status: number; retryAfter?: () => string }> = {
  seconds: { status: 503, retryAfter: () => '120' },
  date: { status: 503, retryAfter: () => new Date(Date.now() + 90_000).toUTCString() },
  throttled: { status: 429, retryAfter: () => '7' },
  excessive: { status: 503, retryAfter: () => '86400' },
  unreadable: { status: 503, retryAfter: () => 'later, maybe' },
  bare: { status: 502 },
  missing: { status: 404, retryAfter: () => '30' },
};

describe("a wholesaler's Retry-After on an HTTP error", () => {
  let database: TestDatabase;
  let gw: Gateway;
  let wholesaler: Server;
  let endpoint: string;
  const ids = new Map<string, string>();

  beforeAll(async () => {
    wholesaler = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const answer = ANSWERS[req.url?.split('/')[1] ?? ''] ?? { status: 500 };
        const headers: Record<string, string> = { 'content-type': 'text/html' };
        if (answer.retryAfter) headers['retry-after'] = answer.retryAfter();
        res.writeHead(answer.status, headers).end('<html><body>Wartungsarbeiten</body></html>');
      });
    });
    await new Promise<void>((resolve) => wholesaler.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(wholesaler.address() as AddressInfo).port}`;
    database = await createTestDatabase('sqlite');
    gw = await startGateway({ database, env: { ALLOW_PRIVATE_ENDPOINTS: 'true' } });
    for (const path of Object.keys(ANSWERS)) {
      const response = await gw.inject({
        method: 'POST',
        url: '/v1/wholesalers/custom',
        key: 'live',
        credentials: null,
        body: { name: `Answers ${path}`, endpoint: `${endpoint}/${path}/msv3/v2.0` },
      });
      expect(response.statusCode).toBe(200);
      ids.set(path, response.json().wholesaler.id);
    }
  });
  afterAll(async () => {
    await gw?.close();
    await database?.dispose();
    wholesaler?.closeAllConnections();
    await new Promise((resolve) => wholesaler?.close(resolve));
  });

  const availability = (path: string) =>
    gw.inject({
      method: 'POST',
      url: '/v1/availability',
      key: 'live',
      body: { wholesaler: ids.get(path)!, items: [{ pzn: '4114918', quantity: 1 }] },
    });

  it.each([
    ['seconds', 503, 120, 120],
    ['date', 503, 89, 90],
    ['throttled', 429, 7, 7],
    ['excessive', 503, 600, 600],
    ['unreadable', 503, 5, 5],
    ['bare', 502, 5, 5],
  ])('passes on when to retry (%s, HTTP %i)', async (path, status, least, most) => {
    const response = await availability(path);
    // The wholesaler's own 503 says it is unavailable: 503 wholesaler_unavailable; other errors are 502.
    expect(response.statusCode).toBe(status === 503 ? 503 : 502);
    expect(response.json()).toMatchObject({
      error: status === 503 ? 'wholesaler_unavailable' : 'wholesaler_http_error',
      wholesaler: ids.get(path),
      upstream: { http_status: status, technical_text: expect.stringContaining('Wartungsarbeiten') },
    });
    const retryAfter = Number(response.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(least);
    expect(retryAfter).toBeLessThanOrEqual(most);
    expect(response.json().message).toContain(`Retry in ${retryAfter} s.`);
  });

  it('says nothing about retrying a status that repeats on every attempt (404)', async () => {
    const response = await availability('missing');
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ error: 'wholesaler_http_error', upstream: { http_status: 404 } });
    expect(response.headers['retry-after']).toBeUndefined();
  });
});
