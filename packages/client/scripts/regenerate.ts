/**
 * `npm run generate -w @msv3-gateway/client`: builds the gateway app in memory (SQLite, no listener),
 * reads its OpenAPI document and writes `src/generated/api.ts`. The document comes from the routes of
 * this checkout, so the types always match the gateway they ship with.
 */
import { writeFileSync } from 'node:fs';
import { buildTestApp } from '../../../test/app.js';
import { createTestDatabase } from '../../../test/db.js';
import { generateTypes } from './generate-types.js';

export const GENERATED_FILE = new URL('../src/generated/api.ts', import.meta.url);

const database = await createTestDatabase('sqlite');
const { app } = await buildTestApp(database);
try {
  const response = await app.inject({ url: '/v1/openapi.json' });
  writeFileSync(GENERATED_FILE, generateTypes(response.json()));
  console.log(`Wrote ${GENERATED_FILE.pathname}`);
} finally {
  await app.close();
  await database.dispose();
}
