import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { ERROR_CATALOGUE } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { errorCodeList } from './error-catalogue-doc.js';
import type { GatewayApp } from './types.js';

describe('API documentation', () => {
  let database: TestDatabase;
  let app: GatewayApp;
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
  let doc: any;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    ({ app } = await buildTestApp(database));
    const response = await app.inject({ url: '/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    doc = response.json();
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });

  it('serves OpenAPI 3 generated from the routes, without a key', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(VERSION);
    // Every route module adds paths; these are the foundation's and must stay.
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/health', '/v1/wholesalers']));
    expect(
      doc.paths['/v1/wholesalers'].get.responses['200'].content['application/json'].schema.properties,
    ).toHaveProperty('wholesalers');
  });

  it('declares the X-API-Key scheme globally and none on public routes', () => {
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
    expect(doc.paths['/v1/health'].get.security).toEqual([]);
    expect(doc.paths['/v1/wholesalers'].get.security).toBeUndefined();
  });

  it('documents the error body as the default response of every operation', () => {
    for (const path of Object.values(doc.paths) as Record<string, { responses: Record<string, unknown> }>[]) {
      for (const operation of Object.values(path)) {
        expect(operation.responses.default).toMatchObject({
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
        });
      }
    }
    const errorBody = doc.components.schemas.ErrorBody;
    expect(errorBody.required.sort()).toEqual(['error', 'error_code', 'message', 'request_id', 'wholesaler']);
    expect(errorBody.properties.error.enum).toEqual(Object.keys(ERROR_CATALOGUE));
  });

  it('lists the whole error catalogue in x-error-codes and in the errors section, last', () => {
    expect(doc['x-error-codes']).toEqual(errorCodeList());
    expect(doc['x-error-codes']).toHaveLength(Object.keys(ERROR_CATALOGUE).length);
    const errors = doc.tags.at(-1);
    expect(errors.name).toBe('errors');
    for (const [kind, { code, status }] of Object.entries(ERROR_CATALOGUE)) {
      expect(errors.description).toContain(`| \`${kind}\` | ${code} | ${status} |`);
    }
  });

  it('keeps the top description to a few lines that link to the errors section', () => {
    const description: string = doc.info.description;
    expect(description.trim().split('\n').length).toBeLessThanOrEqual(10);
    expect(description).not.toContain('| error | error_code |');
    expect(description).toContain('](#operations-tag-errors)');
    expect(description).toMatch(/X-API-Key/);
    expect(description).toMatch(/pk_test_/);
  });

  it('declares every tag the operations use, with a description, and none for the errors section', () => {
    const declared = (doc.tags as { name: string; description: string }[]).map((t) => t.name);
    for (const tag of doc.tags) expect(tag.description, tag.name).not.toBe('');
    const used = new Set(
      Object.values(doc.paths as Record<string, Record<string, { tags: string[] }>>).flatMap((methods) =>
        Object.values(methods).flatMap((operation) => operation.tags),
      ),
    );
    expect([...used].sort()).toEqual(declared.filter((name) => name !== 'errors').sort());
  });

  interface ErrorResponse {
    headers?: Record<string, unknown>;
    content: { 'application/json': { examples: Record<string, { value: unknown }> } };
  }
  type Operation = { security?: unknown[]; description?: string; responses: Record<string, ErrorResponse> };
  const operations = (): [string, Operation][] =>
    Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation]),
    );

  it('gives every keyed operation the responses of its declared errors, each kind with an example', () => {
    for (const [name, operation] of operations()) {
      if (operation.security?.length === 0) continue; // public
      expect(operation.description, name).toMatch(/Errors: .*\.$/);
      for (const status of ['401', '429', '503']) expect(operation.responses, name).toHaveProperty(status);
      expect(operation.responses['429'].headers, name).toHaveProperty('Retry-After');
      expect(operation.responses['503'].headers, name).toHaveProperty('Retry-After');
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === 'default' || status.startsWith('2')) continue;
        const examples = response.content['application/json'].examples;
        for (const [kind, { value }] of Object.entries(examples)) {
          expect(value, `${name} ${status}`).toMatchObject({ error: kind, error_code: expect.any(String) });
          expect(String(ERROR_CATALOGUE[kind as keyof typeof ERROR_CATALOGUE].status), name).toBe(status);
        }
      }
    }
    const order = doc.paths['/v1/orders'].post.responses;
    expect(Object.keys(order['504'].content['application/json'].examples).sort()).toEqual([
      'order_outcome_unknown',
      'wholesaler_timeout',
    ]);
    expect(Object.keys(order['409'].content['application/json'].examples)).toEqual([
      'idempotency_request_in_progress',
    ]);
  });

  interface Media {
    example?: unknown;
    examples?: Record<string, unknown>;
    schema?: { examples?: unknown[] };
  }
  const hasExample = (media: Media | undefined): boolean =>
    media !== undefined &&
    (media.example !== undefined ||
      Object.keys(media.examples ?? {}).length > 0 ||
      (media.schema?.examples?.length ?? 0) > 0);
  interface WithBodies {
    requestBody?: { content: Record<string, Media> };
    responses: Record<string, { content?: Record<string, Media> }>;
  }

  it('gives every operation a request example (where it takes a body) and a success example', () => {
    const missing: string[] = [];
    for (const [name, operation] of operations() as unknown as [string, WithBodies][]) {
      const body = operation.requestBody?.content['application/json'];
      if (operation.requestBody !== undefined && !hasExample(body)) missing.push(`${name} request`);
      const successes = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
      expect(successes.length, name).toBeGreaterThan(0);
      for (const [status, response] of successes) {
        const media = Object.values(response.content ?? {});
        // A response without a body (204) has nothing to show; every other shows an example.
        if (media.length > 0 && !media.some(hasExample)) missing.push(`${name} ${status}`);
      }
    }
    const webhooks = Object.entries(doc.webhooks as Record<string, { post: WithBodies }>);
    expect(webhooks.length).toBeGreaterThan(0);
    for (const [event, { post }] of webhooks) {
      if (!hasExample(post.requestBody?.content['application/json'])) missing.push(`webhook ${event}`);
    }
    expect(missing).toEqual([]);
  });

  /** Every operation that calls a wholesaler: the server refuses each without the MSV3 login. */
  const WHOLESALER_CALLS = [
    'testConnection',
    'checkAvailability',
    'checkBulkAvailability',
    'getContract',
    'placeOrder',
    'getOrderStatus',
    'listDeliveries',
    'confirmDeliveries',
    'deliveryHistory',
    'enquireReturn',
    'announceReturn',
    'requestTakeBackOffer',
    'downloadDocument',
  ];
  type Parameter = { in: string; name: string; required?: boolean; schema?: { default?: unknown } };
  const parametersOf = () =>
    (operations() as unknown as [string, { operationId: string; parameters?: Parameter[] }][]).map(
      ([name, operation]) => ({ name, id: operation.operationId, parameters: operation.parameters ?? [] }),
    );

  it('marks X-MSV3-Username and X-MSV3-Password required exactly where the server refuses a call without them', () => {
    const withLogin = parametersOf()
      .filter(({ parameters }) => parameters.some((p) => p.in === 'header' && p.name === 'x-msv3-username'))
      .map(({ id, parameters }) => {
        const login = parameters.filter((p) => p.in === 'header' && p.name.startsWith('x-msv3-'));
        expect(
          login.map((p) => [p.name, p.required]),
          id,
        ).toEqual([
          ['x-msv3-username', true],
          ['x-msv3-password', true],
        ]);
        return id;
      });
    expect(withLogin.sort()).toEqual([...WHOLESALER_CALLS].sort());
  });

  it('marks no parameter with a default as required: the server fills it in', () => {
    const defaulted = parametersOf().flatMap(({ name, parameters }) =>
      parameters.filter((p) => p.schema?.default !== undefined).map((p) => ({ at: `${name} ${p.name}`, p })),
    );
    expect(defaulted.map(({ at }) => at)).toEqual(
      expect.arrayContaining([
        'POST /v1/orders dry_run',
        'GET /v1/deliveries/history limit',
        'GET /v1/webhooks/{id}/deliveries limit',
        'GET /v1/events limit',
      ]),
    );
    for (const { at, p } of defaulted) expect(p.required, at).not.toBe(true);
  });

  it('declares the headers every answer carries: X-Request-Id, the rate limit on keyed routes, the replay marks', () => {
    for (const [name, operation] of operations()) {
      const keyed = operation.security?.length !== 0;
      const idempotent = (operation as unknown as { parameters?: Parameter[] }).parameters?.some(
        (p) => p.name === 'idempotency-key',
      );
      for (const [status, response] of Object.entries(
        operation.responses as Record<string, { headers?: Record<string, { required?: boolean }> }>,
      )) {
        const headers = response.headers ?? {};
        const at = `${name} ${status}`;
        expect(headers['X-Request-Id']?.required, at).toBe(true);
        for (const header of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
          if (!keyed) expect(headers[header], at).toBeUndefined();
          else expect(headers[header]?.required ?? false, `${at} ${header}`).toBe(status.startsWith('2'));
        }
        expect(headers['Idempotent-Replayed'] !== undefined, at).toBe(idempotent === true);
      }
    }
  });

  it('describes every success answer in words of its own', () => {
    const vague = operations().flatMap(([name, operation]) =>
      Object.entries(operation.responses as unknown as Record<string, { description: string }>)
        .filter(
          ([status, response]) =>
            status.startsWith('2') && /^Default Response$|^$/.test(response.description),
        )
        .map(([status]) => `${name} ${status}`),
    );
    expect(vague).toEqual([]);
  });

  it('names the origin it was fetched by as its server, so a generated client has a base URL', async () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'http://localhost:80' })]);
    const fetched = await app.inject({ url: '/v1/openapi.json', headers: { host: 'gateway.example:8443' } });
    expect(fetched.json().servers[0].url).toBe('http://gateway.example:8443');
    const ui = await app.inject({ url: '/docs/json', headers: { host: 'gateway.example' } });
    expect(ui.json().servers[0].url).toBe('http://gateway.example');
  });

  it('lists the event types a subscription takes as an enum, `*` included', () => {
    const create = doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema;
    expect(create.properties.events.items.enum).toEqual([
      'delivery.received',
      'delivery.shortage',
      'order.status_changed',
      'order.fulfilled',
      'wholesaler.status_changed',
      '*',
    ]);
  });

  it('says which request_id is which: the request id in error bodies, the MSV3 order id in an order', () => {
    const errorSide = doc.components.schemas.ErrorBody.properties.request_id.description;
    expect(errorSide).toMatch(/X-Request-Id/);
    expect(errorSide).toMatch(/support/);
    const order = doc.paths['/v1/orders'].post.responses['200'].content['application/json'].schema;
    expect(order.properties.request_id.description).toMatch(/MSV3 order id.*Not this HTTP request's id/);
  });

  it('passes @redocly/cli lint with the recommended rules: no error, no warning', async () => {
    // As `npm start` serves it (the lint refuses a server on localhost, rightly for a published document).
    const served = await app.inject({ url: '/v1/openapi.json', headers: { host: '127.0.0.1:8080' } });
    const folder = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(folder, 'openapi.json');
      writeFileSync(file, served.body);
      const run = spawnSync(join('node_modules', '.bin', 'redocly'), ['lint', file, '--format=json'], {
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 60_000,
      });
      const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; message: string }[];
      };
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('serves Swagger UI at /docs without a key', async () => {
    const response = await app.inject({ url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('swagger-ui-bundle.js');
    expect(response.body).toContain('<title>MSV3 Gateway API</title>');
    const spec = await app.inject({ url: '/docs/json' });
    expect(spec.json().paths).toHaveProperty('/v1/wholesalers');
  });

  it('sends / to the docs with 302, for GET and HEAD, without a key', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const response = await app.inject({ method, url: '/' });
      expect(response.statusCode, method).toBe(302);
      expect(response.headers.location, method).toBe('/docs');
    }
  });

  it('still answers unknown paths with the JSON 404', async () => {
    for (const url of ['/index.html', '/doc', '/v1']) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toMatchObject({ error: 'route_not_found' });
    }
  });
});
