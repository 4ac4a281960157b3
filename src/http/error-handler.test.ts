import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { registerProbeRoutes } from '../../test/probe-routes.js';
import { ApiError, ERROR_CATALOGUE, type ErrorKind } from '../core/errors.js';
import { createLogger } from '../observability/logger.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../store/database-unavailable.js';
import type { RouteRegistration } from './app-deps.js';
import { UNDECLARED_ERROR } from './error-handler.js';
import { routeErrors } from './route-errors.js';
import type { GatewayApp } from './types.js';

function expectError(
  response: LightMyRequestResponse,
  kind: ErrorKind,
  wholesaler: string | null = null,
): Record<string, unknown> {
  const body = response.json();
  expect(response.statusCode).toBe(ERROR_CATALOGUE[kind].status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(body).toMatchObject({ error: kind, error_code: ERROR_CATALOGUE[kind].code, wholesaler });
  expect(typeof body.message).toBe('string');
  expect(body.request_id).toBe(response.headers['x-request-id']);
  return body;
}

/** Errors as the drivers raise them when the database is away, each with an internal detail to hide. */
const DATABASE_ERRORS: Record<string, () => Error> = {
  'PostgreSQL 57P01': () =>
    Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
      severity: 'FATAL',
      detail: 'password hunter2',
    }),
  'refused connection': () =>
    Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), {
      code: 'ECONNREFUSED',
      address: '10.0.0.5',
    }),
  'pg connection ended': () => new Error('Connection terminated unexpectedly'),
  'SQLite busy': () => Object.assign(new Error('database is locked (SQLITE_BUSY)'), { code: 'SQLITE_BUSY' }),
  'SQLite disk IO error': () => Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }),
  'wrapped in a cause': () =>
    new Error('storing the order failed (hunter2)', {
      cause: Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    }),
};

const registerDatabaseErrorRoute: RouteRegistration = (app) => {
  app.get<{ Params: { name: string } }>('/test/database-error/:name', async (request) => {
    if (request.params.name === 'constraint')
      throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    throw DATABASE_ERRORS[request.params.name]!();
  });
  app.get('/test/gateway-busy', async () => {
    throw new ApiError('gateway_busy', 'Too many calls to phoenix are in progress or waiting.', {
      wholesaler: 'phoenix',
      retryAfter: 3,
    });
  });
};

/** A route that declares one error kind and answers another when asked to. */
const registerDeclaringRoute: RouteRegistration = (app) => {
  app.get<{ Params: { kind: string } }>(
    '/test/declared/:kind',
    { config: { errors: routeErrors(['order_not_found']) } },
    async (request) => {
      throw new ApiError(request.params.kind as ErrorKind, 'As asked.');
    },
  );
  // No body schema, as the test helpers' POST routes: a body sent anyway is still parsed.
  app.post('/test/declared-bodiless', { config: { errors: routeErrors(['order_not_found']) } }, async () => ({
    done: true,
  }));
};

describe('error responses', () => {
  let database: TestDatabase;
  let app: GatewayApp;
  let key: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => logLines.push(line) },
    });
    ({ app } = await buildTestApp(database, {
      // A budget for the many requests of this suite's one key.
      env: { BODY_LIMIT_BYTES: '2048', RATE_LIMIT_TEST_POINTS: '1000' },
      logger,
      extraRoutes: [registerProbeRoutes, registerDatabaseErrorRoute, registerDeclaringRoute],
    }));
    key = (await createTestKey(database)).secret;
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });

  const post = (payload: string, contentType = 'application/json') =>
    app.inject({
      method: 'POST',
      url: '/test/orders',
      headers: { 'x-api-key': key, 'content-type': contentType },
      payload,
    });
  const validOrder = { wholesaler: 'phoenix', items: [{ pzn: '01234562', quantity: 1 }] };

  it('accepts a valid body (the baseline for the cases below)', async () => {
    const response = await post(JSON.stringify(validOrder));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ accepted: 1, dry_run: false });
  });

  it('answers malformed JSON with 400 malformed_json', async () => {
    expectError(await post('{"wholesaler": "phoenix", items: ['), 'malformed_json');
  });

  it('answers an empty JSON body with 400 malformed_json', async () => {
    expectError(await post(''), 'malformed_json');
  });

  it('answers a prototype-poisoning body with 400 invalid_request that names the key', async () => {
    const body = expectError(
      await post('{"__proto__": {"admin": true}, "wholesaler": "x", "items": []}'),
      'invalid_request',
    );
    expect(body.message).toContain('__proto__');
    // The key spelt with escapes, and a constructor key, are refused the same way.
    expectError(
      await post('{"\\u005f_proto__": {"admin": true}, "wholesaler": "x", "items": []}'),
      'invalid_request',
    );
    expectError(
      await post('{"constructor": {"prototype": {}}, "wholesaler": "x", "items": []}'),
      'invalid_request',
    );
  });

  it('names the offending field of a schema violation in message and param', async () => {
    const items = [1, 2, 3].map((i) => ({ pzn: String(i), quantity: 1 }));
    items.push({ pzn: '12345678X', quantity: 1 });
    const body = expectError(
      await post(JSON.stringify({ wholesaler: 'phoenix', items })),
      'invalid_request',
      'phoenix',
    );
    expect(body.message).toBe('`items[3].pzn` must be 1 to 8 digits, e.g. 04114918.');
    expect(body.param).toBe('items[3].pzn');
  });

  it('names a missing required field', async () => {
    const body = expectError(await post(JSON.stringify({ items: validOrder.items })), 'invalid_request');
    expect(body).toMatchObject({ message: '`wholesaler` is required.', param: 'wholesaler' });
  });

  it('names the wholesaler the request names, unless that id is itself malformed', async () => {
    const items = [{ pzn: '1', quantity: 0 }];
    expectError(
      await post(JSON.stringify({ wholesaler: 'gehe_test', items })),
      'invalid_request',
      'gehe_test',
    );
    for (const wholesaler of ['', 'a b', '<script>', 'x'.repeat(81), 42]) {
      expectError(await post(JSON.stringify({ wholesaler, items })), 'invalid_request', null);
    }
  });

  it('refuses unknown fields instead of dropping them', async () => {
    const items = [{ pzn: '1', quantity: 1, colour: 'red' }];
    const body = expectError(await post(JSON.stringify({ wholesaler: 'x', items })), 'invalid_request', 'x');
    expect(body).toMatchObject({
      message: '`items[0].colour` is not a known field.',
      param: 'items[0].colour',
    });
  });

  it('does not turn a string into a number in the body', async () => {
    const items = [{ pzn: '1', quantity: '5' }];
    const body = expectError(await post(JSON.stringify({ wholesaler: 'x', items })), 'invalid_request', 'x');
    expect(body).toMatchObject({
      message: '`items[0].quantity` must be a whole number.',
      param: 'items[0].quantity',
    });
  });

  it('lists the allowed values of an enum', async () => {
    const items = [{ pzn: '1', quantity: 1, demand_type: 'urgent' }];
    const body = expectError(await post(JSON.stringify({ wholesaler: 'x', items })), 'invalid_request', 'x');
    expect(body.message).toBe('`items[0].demand_type` must be one of: direct, one_of_many, unspecified.');
  });

  it('reports an empty array against its minimum', async () => {
    const body = expectError(
      await post(JSON.stringify({ wholesaler: 'x', items: [] })),
      'invalid_request',
      'x',
    );
    expect(body).toMatchObject({ message: '`items` needs at least 1 entry.', param: 'items' });
  });

  it('names a bad query parameter, after converting query text', async () => {
    const ok = await app.inject({
      method: 'POST',
      url: '/test/orders?dry_run=true',
      headers: { 'x-api-key': key },
      payload: validOrder,
    });
    expect(ok.json()).toEqual({ accepted: 1, dry_run: true });
    const bad = await app.inject({
      method: 'POST',
      url: '/test/orders?dry_run=perhaps',
      headers: { 'x-api-key': key },
      payload: validOrder,
    });
    expect(expectError(bad, 'invalid_request', 'phoenix')).toMatchObject({
      message: 'Query parameter `dry_run` must be true or false.',
      param: 'dry_run',
    });
  });

  it('answers an unknown route with 404 route_not_found, with or without a key', async () => {
    expectError(await app.inject({ url: '/v1/nothing-here' }), 'route_not_found');
    const keyed = await app.inject({ url: '/v1/nothing-here?x=1', headers: { 'x-api-key': key } });
    expect(expectError(keyed, 'route_not_found').message).toBe('No route GET /v1/nothing-here.');
  });

  it('answers a known path with the wrong method with 405 and an Allow header, before checking the key', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/v1/wholesalers' });
    expectError(response, 'method_not_allowed');
    expect(response.headers.allow).toBe('GET, HEAD');
    const post405 = await app.inject({ method: 'PUT', url: '/test/orders', payload: 'not even json' });
    expectError(post405, 'method_not_allowed');
    expect(post405.headers.allow).toBe('POST');
  });

  it('answers a body over BODY_LIMIT_BYTES with 413 payload_too_large', async () => {
    const items = Array.from({ length: 50 }, () => ({ pzn: '12345678', quantity: 99999 }));
    const payload = JSON.stringify({ wholesaler: 'phoenix'.repeat(40), items });
    expect(payload.length).toBeGreaterThan(2048);
    expect(expectError(await post(payload), 'payload_too_large').message).toContain('2048 bytes');
  });

  it('answers a non-JSON content type with 415 unsupported_media_type', async () => {
    expectError(await post('wholesaler=phoenix', 'text/plain'), 'unsupported_media_type');
    expectError(await post('<order/>', 'application/xml'), 'unsupported_media_type');
  });

  it('answers a missing key with 401 api_key_missing', async () => {
    expectError(await app.inject({ url: '/v1/wholesalers' }), 'api_key_missing');
  });

  it('answers a malformed key with 401 api_key_invalid', async () => {
    const response = await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': 'sk_live_123' } });
    expectError(response, 'api_key_invalid');
  });

  it('logs an error kind the route did not declare, and answers it all the same', async () => {
    const undeclared = () =>
      logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === UNDECLARED_ERROR);
    logLines.length = 0;
    for (const kind of ['order_not_found', 'rate_limited', 'internal_error'] as const) {
      expectError(await app.inject({ url: `/test/declared/${kind}`, headers: { 'x-api-key': key } }), kind);
    }
    expect(undeclared()).toEqual([]); // declared, implied by a key, possible anywhere
    const response = await app.inject({
      url: '/test/declared/webhook_not_found',
      headers: { 'x-api-key': key },
    });
    expectError(response, 'webhook_not_found');
    expect(undeclared()).toMatchObject([{ error_kind: 'webhook_not_found', level: 50 }]);
  });

  it.each([
    ['unsupported_media_type', 'text/plain', 'hello'],
    ['malformed_json', 'application/json', '{"a":'],
    ['payload_too_large', 'application/json', JSON.stringify({ filler: 'x'.repeat(4096) })],
  ] as const)('declares %s for a POST route without a body schema', async (kind, type, payload) => {
    logLines.length = 0;
    const response = await app.inject({
      method: 'POST',
      url: '/test/declared-bodiless',
      headers: { 'x-api-key': key, 'content-type': type },
      payload,
    });
    expectError(response, kind);
    const undeclared = logLines
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === UNDECLARED_ERROR);
    expect(undeclared).toEqual([]);
  });

  it('answers an unexpected exception with a generic 500 and logs the stack', async () => {
    logLines.length = 0;
    const response = await app.inject({ url: '/test/boom', headers: { 'x-api-key': key } });
    const body = expectError(response, 'internal_error');
    expect(response.body).not.toContain('hunter2');
    expect(response.body).not.toContain('probe-routes');
    expect(body.message).toBe('An unexpected error occurred; quote the request id to support.');
    const logged = logLines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'unexpected error');
    expect(logged.request_id).toBe(body.request_id);
    expect(logged.err.stack).toContain('probe-routes');
  });

  it.each(Object.keys(DATABASE_ERRORS))(
    'answers a database outage (%s) with 503 service_unavailable and Retry-After, without internals',
    async (name) => {
      logLines.length = 0;
      const response = await app.inject({
        url: `/test/database-error/${name}`,
        headers: { 'x-api-key': key },
      });
      const body = expectError(response, 'service_unavailable');
      expect(response.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
      expect(body.message).toBe('The database is unavailable right now; retry shortly.');
      for (const internal of [
        'hunter2',
        'administrator',
        'ECONN',
        'SQLITE',
        'terminated',
        '10.0.0.5',
        'probe',
      ])
        expect(response.body).not.toContain(internal);
      expect(Object.keys(body).sort()).toEqual([
        'error',
        'error_code',
        'message',
        'request_id',
        'wholesaler',
      ]);
      // Logged as a warning with the cause, not as an unexpected error.
      const logged = logLines
        .map((line) => JSON.parse(line))
        .find((entry) => entry.request_id === body.request_id && entry.err);
      expect(logged).toMatchObject({ level: 40, msg: body.message });
      expect(logged.err.stack).toBeDefined();
    },
  );

  it('answers load shedding (gateway_busy) with its request line only: no warning, no stack', async () => {
    logLines.length = 0;
    const response = await app.inject({ url: '/test/gateway-busy', headers: { 'x-api-key': key } });
    const body = expectError(response, 'gateway_busy', 'phoenix');
    expect(response.headers['retry-after']).toBe('3');
    const lines = logLines
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.request_id === body.request_id);
    expect(lines.map((entry) => [entry.level, entry.msg])).toEqual([[30, 'request completed']]);
  });

  it('keeps answering 500 internal_error for an error that is not the database', async () => {
    const response = await app.inject({
      url: '/test/database-error/constraint',
      headers: { 'x-api-key': key },
    });
    expectError(response, 'internal_error');
    expect(response.headers['retry-after']).toBeUndefined();
  });

  it('puts X-Request-Id on successful responses too', async () => {
    const response = await app.inject({ url: '/v1/health' });
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
  });
});
