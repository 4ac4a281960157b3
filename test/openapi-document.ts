import { afterAll, beforeAll } from 'vitest';
import type { GatewayApp } from '../src/http/types.js';
import { buildTestApp } from './app.js';
import { createTestDatabase, type TestDatabase } from './db.js';

/**
 * For a describe block that checks the OpenAPI document: builds a test app on SQLite before its tests,
 * hands the document (`GET /v1/openapi.json`, as plain JSON) to `receive`, and closes the app after.
 */
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
export function withOpenApiDocument(receive: (document: any) => void): void {
  let database: TestDatabase;
  let app: GatewayApp;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    ({ app } = await buildTestApp(database));
    const response = await app.inject({ url: '/v1/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${response.statusCode}`);
    receive(response.json());
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });
}
