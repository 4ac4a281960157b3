import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withOpenApiDocument } from '../../../test/openapi-document.js';
import { generateTypes } from './generate-types.js';

const GENERATED = new URL('../src/generated/api.ts', import.meta.url);

describe('the generated client types', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
  let document: any;
  withOpenApiDocument((received) => {
    document = received;
  });

  it('are current with the OpenAPI document of this checkout', () => {
    const expected = generateTypes(document);
    const committed = readFileSync(GENERATED, 'utf8');
    if (committed !== expected) {
      expect.fail(
        'packages/client/src/generated/api.ts is out of date with the OpenAPI document. ' +
          'Run `npm run generate -w @msv3-gateway/client` and commit the result.',
      );
    }
  });

  it('has one operation per operationId and every error kind of the catalogue', () => {
    const source = generateTypes(document);
    for (const [, item] of Object.entries<Record<string, { operationId?: string }>>(document.paths)) {
      for (const operation of Object.values(item)) {
        if (typeof operation?.operationId === 'string') {
          expect(source).toContain(`  ${operation.operationId}: {method: `);
        }
      }
    }
    for (const { error } of document['x-error-codes'] as { error: string }[]) {
      expect(source).toMatch(new RegExp(`export type ErrorKind = [^;]*'${error}'`));
    }
  });

  it('refuses a schema it cannot express', () => {
    const broken = structuredClone(document);
    broken.paths['/v1/health'].get.responses['200'].content['application/json'].schema = { type: 'tuple' };
    expect(() => generateTypes(broken)).toThrow('Unsupported schema type "tuple"');
  });
});
