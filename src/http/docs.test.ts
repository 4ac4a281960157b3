import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { errorCodeList } from './error-catalogue-doc.js';
import { ERROR_CATALOGUE } from './errors.js';
import type { GatewayApp } from './types.js';
import { VERSION } from './version.js';

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

  it('serves Swagger UI at /docs without a key', async () => {
    const response = await app.inject({ url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('Swagger UI');
    const spec = await app.inject({ url: '/docs/json' });
    expect(spec.json().paths).toHaveProperty('/v1/wholesalers');
  });
});
