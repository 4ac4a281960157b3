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

  it('lists the whole error catalogue in x-error-codes and in the description', () => {
    expect(doc['x-error-codes']).toEqual(errorCodeList());
    expect(doc['x-error-codes']).toHaveLength(Object.keys(ERROR_CATALOGUE).length);
    for (const [kind, { code, status }] of Object.entries(ERROR_CATALOGUE)) {
      expect(doc.info.description).toContain(`| \`${kind}\` | ${code} | ${status} |`);
    }
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

  it('passes @redocly/cli lint with the recommended rules: no error, no warning', () => {
    const folder = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(folder, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
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
    expect(response.body).toContain('Swagger UI');
    const spec = await app.inject({ url: '/docs/json' });
    expect(spec.json().paths).toHaveProperty('/v1/wholesalers');
  });
});
