import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayApp } from '../src/http/types.js';
import { buildTestApp, createTestKey } from './app.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { registerProbeRoutes } from './probe-routes.js';

/** Writes raw bytes to the server and returns everything it answers before closing. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write(request);
  });
}

function bodyOf(raw: string): Record<string, unknown> {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe('the gateway over a real socket', () => {
  let database: TestDatabase;
  let app: GatewayApp;
  let base: string;
  let port: number;
  let key: string;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    ({ app } = await buildTestApp(database, {
      env: { BODY_LIMIT_BYTES: '2048', REQUEST_TIMEOUT_MS: '1000' },
      extraRoutes: [registerProbeRoutes],
    }));
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    port = Number(new URL(base).port);
    key = (await createTestKey(database)).secret;
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });

  it('answers health without a key', async () => {
    const response = await fetch(`${base}/v1/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await response.json()).toEqual({ status: 'ok', version: '0.1.0' });
  });

  it('lists the wholesalers for a key, with rate-limit headers', async () => {
    const response = await fetch(`${base}/v1/wholesalers`, { headers: { 'x-api-key': key } });
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).toBe('25');
    const { wholesalers } = (await response.json()) as { wholesalers: { id: string; verified: boolean }[] };
    // The shipped catalogue, all in the sandbox for a test key (none has a public test server).
    expect(wholesalers.map((w) => w.id)).toEqual([
      'phoenix',
      'alliance',
      'gehe',
      'sanacorp',
      'noweda',
      'aep',
    ]);
    expect(wholesalers.every((w) => w.verified)).toBe(true);
  });

  it('answers every error in the uniform shape', async () => {
    const cases: [string, RequestInit, number, string][] = [
      ['/v1/wholesalers', {}, 401, 'api_key_missing'],
      ['/v1/missing', {}, 404, 'route_not_found'],
      ['/v1/health', { method: 'PATCH' }, 405, 'method_not_allowed'],
      [
        '/test/orders',
        { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{"a":' },
        400,
        'malformed_json',
      ],
      [
        '/test/orders',
        { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'text/csv' }, body: 'a,b' },
        415,
        'unsupported_media_type',
      ],
      [
        '/test/orders',
        {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: 'x'.repeat(4096),
        },
        413,
        'payload_too_large',
      ],
      ['/test/boom', { headers: { 'x-api-key': key } }, 500, 'internal_error'],
    ];
    for (const [path, init, status, error] of cases) {
      const response = await fetch(`${base}${path}`, init);
      const body = (await response.json()) as Record<string, unknown>;
      expect({ path, status: response.status, error: body.error }).toEqual({ path, status, error });
      expect(body.request_id).toBe(response.headers.get('x-request-id'));
    }
  });

  it('answers an unparseable request line with a uniform 400', async () => {
    const raw = await rawExchange(port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(raw)).toMatchObject({
      error: 'invalid_request',
      error_code: '1000',
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it('answers CONNECT with 405 method_not_allowed in the uniform shape and closes, instead of dropping it', async () => {
    for (const target of ['example.com:443', '127.0.0.1:6379']) {
      const raw = await rawExchange(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      expect(raw).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
      expect(raw).toMatch(/\r\nConnection: close\r\n/i);
      expect(raw).toMatch(/\r\nallow: DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT\r\n/i);
      const requestId = /\r\nX-Request-Id: (req_\S+)\r\n/i.exec(raw)?.[1];
      expect(bodyOf(raw)).toEqual({
        error: 'method_not_allowed',
        error_code: '1008',
        message: 'CONNECT is not supported: the gateway is not a proxy.',
        wholesaler: null,
        request_id: requestId,
      });
    }
    // The server goes on answering.
    expect((await fetch(`${base}/v1/health`)).status).toBe(200);
  });

  it('answers a request asking for a protocol upgrade as an ordinary request', async () => {
    const raw = await rawExchange(
      port,
      'GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\r\n',
    );
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(bodyOf(raw)).toEqual({ status: 'ok', version: '0.1.0' });
  });

  it('answers oversized headers with 431 request_headers_too_large', async () => {
    const raw = await rawExchange(
      port,
      `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(raw)).toMatchObject({ error: 'request_headers_too_large', error_code: '1009' });
  });

  it('answers a client that stalls while sending its body with 408 once REQUEST_TIMEOUT_MS has passed', async () => {
    const started = Date.now();
    const raw = await rawExchange(
      port,
      `POST /v1/availability HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"wholesaler":"phoenix",`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(raw)).toMatchObject({
      error: 'request_timeout',
      request_id: expect.stringMatching(/^req_/),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses an HTTP/1.1 request without a Host header in the uniform shape', async () => {
    const raw = await rawExchange(port, 'GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(raw)).toMatchObject({
      error: 'invalid_request',
      message: 'An HTTP/1.1 request must carry a Host header.',
      param: 'Host',
      request_id: expect.stringMatching(/^req_/),
    });
    // HTTP/1.0 has no Host header to require.
    expect(await rawExchange(port, 'GET /v1/health HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('answers URLs the router refuses (bad percent-encoding, over-long path parameters) in the uniform shape', async () => {
    for (const path of [
      '/v1/orders/%ZZ/status?wholesaler=phoenix',
      '/v1/webhooks/%C0%AF',
      `/v1/orders/${'a'.repeat(101)}/status?wholesaler=phoenix`,
      `/v1/documents/${'d'.repeat(300)}?wholesaler=phoenix`,
    ]) {
      const response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
      const body = (await response.json()) as Record<string, unknown>;
      expect({ path, status: response.status, error: body.error, code: body.error_code }).toEqual({
        path,
        status: 400,
        error: 'invalid_request',
        code: '1000',
      });
      expect(body.request_id).toBe(response.headers.get('x-request-id'));
    }
  });

  it('answers a static docs path that leaves its folder with 404, not 500', async () => {
    for (const path of ['/docs/static/%2e%2e/package.json', '/docs/static/..%5c..%5cpackage.json']) {
      const raw = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(raw).toMatch(/^HTTP\/1\.1 404 /);
      expect(bodyOf(raw)).toMatchObject({ error: 'route_not_found' });
    }
  });

  it('says why valid JSON with a __proto__ key is refused, and still calls broken JSON malformed', async () => {
    const post = (body: string) =>
      fetch(`${base}/v1/availability`, {
        method: 'POST',
        headers: {
          'x-api-key': key,
          'content-type': 'application/json',
          'x-msv3-username': 'apotheke1',
          'x-msv3-password': 'geheim',
        },
        body,
      });
    const poisoned = await post('{"wholesaler":"phoenix","__proto__":{"admin":true},"items":[]}');
    expect(poisoned.status).toBe(400);
    expect(await poisoned.json()).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('__proto__'),
    });
    const broken = await post('{"wholesaler":');
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: 'malformed_json' });
  });

  it('takes an empty application/json body as no body on routes without one, and refuses it where a body is required', async () => {
    const json = { 'x-api-key': key, 'content-type': 'application/json' };
    const deleted = await fetch(`${base}/v1/webhooks/whk_doesnotexist`, { method: 'DELETE', headers: json });
    expect(deleted.status).toBe(404);
    const availability = await fetch(`${base}/v1/availability`, {
      method: 'POST',
      headers: { ...json, 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'geheim' },
    });
    expect(availability.status).toBe(400);
    expect(await availability.json()).toMatchObject({ error: 'malformed_json' });
  });
});
