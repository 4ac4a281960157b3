import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';

const run = promisify(execFile);
const ROOT = new URL('../../..', import.meta.url).pathname;
const CLIENT_SOURCE = new URL('../src/index.ts', import.meta.url).pathname;
const SECTION = '## The same with the TypeScript client';

/** The first ```ts block of docs/client.md's tour section, as a user copies it. */
function tourBlock(): string {
  const page = readFileSync(join(ROOT, 'docs/client.md'), 'utf8');
  const section = page.slice(page.indexOf(SECTION));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!page.includes(SECTION) || match === null)
    throw new Error(`docs/client.md has no ts block under "${SECTION}"`);
  return match[1]!;
}

// docs/client.md's tour, typechecked with the root tsc and run with tsx against a real gateway, so the
// page cannot rot. '@msv3-gateway/client' resolves to the client's sources through tsconfig paths.
describe('docs/client.md: the tour with the TypeScript client', () => {
  let folder: string;
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-client-tour-'));
    writeFileSync(join(folder, 'tour.ts'), tourBlock());
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(folder, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          typeRoots: [join(ROOT, 'node_modules/@types')],
          types: ['node'],
          paths: { '@msv3-gateway/client': [CLIENT_SOURCE] },
        },
        include: ['tour.ts'],
      }),
    );
    database = await createTestDatabase('sqlite');
    gw = await startGateway({ database });
  });
  afterAll(async () => {
    await gw?.close();
    await database?.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  it('typechecks', { timeout: 60_000 }, async () => {
    await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', folder]);
  });

  it('runs against a real gateway and prints what the page promises', { timeout: 60_000 }, async () => {
    const url = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    const { stdout } = await run(join(ROOT, 'node_modules/.bin/tsx'), ['tour.ts'], {
      cwd: folder,
      env: { PATH: process.env.PATH, GATEWAY_URL: url, KEY: gw.keys.test.secret },
    });
    expect(stdout.trim().split('\n')).toEqual([
      'health: ok',
      expect.stringMatching(/^wholesalers: .*\bphoenix\b/),
      'available: 04114918=true 09990122=true',
      'dry run: dry_run',
      'order: confirmed',
      'placement: confirmed',
      'shortages: true',
      'document: %PDF-',
      'error: 404 order_not_found true',
    ]);
  });
});
