import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import type { GatewayApp } from '../types.js';

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  parameters?: { in: string; name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<
    string,
    { content?: Record<string, { example?: unknown; schema?: { format?: string } }> }
  >;
}

const OPERATIONS: [string, string, string][] = [
  ['get', '/v1/deliveries', 'listDeliveries'],
  ['post', '/v1/deliveries/confirm', 'confirmDeliveries'],
  ['get', '/v1/deliveries/history', 'deliveryHistory'],
  ['post', '/v1/returns', 'enquireReturn'],
  ['post', '/v1/returns/announce', 'announceReturn'],
  ['post', '/v1/returns/offers', 'requestTakeBackOffer'],
  ['get', '/v1/documents/{id}', 'downloadDocument'],
];

describe('OpenAPI document: deliveries, returns, documents', () => {
  let database: TestDatabase;
  let app: GatewayApp;
  let paths: Record<string, Record<string, Operation>>;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    ({ app } = await buildTestApp(database));
    paths = (await app.inject({ url: '/v1/openapi.json' })).json().paths;
  });
  afterAll(async () => {
    await app.close();
    await database.dispose();
  });

  for (const [method, path, operationId] of OPERATIONS) {
    it(`documents ${method.toUpperCase()} ${path} with an example request and response`, () => {
      const operation = paths[path]?.[method];
      expect(operation).toMatchObject({
        operationId,
        tags: [expect.any(String)],
        summary: expect.any(String),
      });
      const exampleRequest =
        operation?.requestBody?.content['application/json']?.example ??
        operation?.parameters?.find((p) => p.in === 'query' && p.name === 'wholesaler')?.example;
      expect(exampleRequest).toBeDefined();
      const ok = operation?.responses['200']?.content ?? {};
      const [media] = Object.values(ok);
      expect(media?.example).toBeDefined();
      expect(operation?.parameters?.map((p) => p.name)).toEqual(
        expect.arrayContaining(['x-msv3-username', 'x-msv3-password']),
      );
    });
  }

  it('documents the document download as a binary PDF', () => {
    const content = paths['/v1/documents/{id}']?.get?.responses['200']?.content;
    expect(Object.keys(content ?? {})).toEqual(['application/pdf']);
    expect(content?.['application/pdf']?.schema?.format).toBe('binary');
  });
});
