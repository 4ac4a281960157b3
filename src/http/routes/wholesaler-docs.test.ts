import { describe, expect, it } from 'vitest';
import { withOpenApiDocument } from '../../../test/openapi-document.js';

const OPERATIONS: [string, string, 'body' | 'query' | 'none'][] = [
  ['/v1/wholesalers', 'get', 'none'],
  ['/v1/wholesalers/custom', 'post', 'body'],
  ['/v1/connection/test', 'post', 'body'],
  ['/v1/availability', 'post', 'body'],
  ['/v1/availability/bulk', 'post', 'body'],
  ['/v1/contracts', 'get', 'query'],
];

describe('OpenAPI document of the wholesaler endpoints', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
  let doc: any;
  withOpenApiDocument((document) => {
    doc = document;
  });

  it('gives every operation an id, a tag, a summary and an example request and response', () => {
    for (const [path, method, input] of OPERATIONS) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toMatchObject({
        operationId: expect.any(String),
        tags: [expect.any(String)],
        summary: expect.any(String),
      });
      expect(
        operation.responses['200'].content['application/json'].example,
        `${path} response`,
      ).toBeDefined();
      if (input === 'body') {
        expect(operation.requestBody.content['application/json'].example, `${path} request`).toBeDefined();
      }
      if (input === 'query') {
        const wholesaler = operation.parameters.find((p: { name: string }) => p.name === 'wholesaler');
        expect(wholesaler).toMatchObject({ in: 'query', required: true, example: 'phoenix' });
      }
    }
  });

  it('documents the MSV3 credential headers on the endpoints that call a wholesaler', () => {
    for (const [path, method] of OPERATIONS.slice(2)) {
      const names = doc.paths[path][method].parameters.map((p: { name: string }) => p.name);
      expect(names, path).toEqual(expect.arrayContaining(['x-msv3-username', 'x-msv3-password']));
    }
  });
});
