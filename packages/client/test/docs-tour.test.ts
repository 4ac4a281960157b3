import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import { whilePackingClient } from './pack-lock.js';

const run = promisify(execFile);
const ROOT = new URL('../../..', import.meta.url).pathname;
const SECTION = '## The same with the TypeScript client';
/** The URL and key as the page prints them; the test puts its gateway's there. */
const PAGE_URL = 'http://127.0.0.1:8080';
const PAGE_KEY = 'pk_test_…';

/** The section's blocks as a user copies them: the set-up (sh), the tour (ts) and the run (sh). */
function tourSection(): { setup: string; tour: string; start: string } {
  const page = readFileSync(join(ROOT, 'docs/client.md'), 'utf8');
  if (!page.includes(SECTION)) throw new Error(`docs/client.md has no "${SECTION}"`);
  const section = page.slice(page.indexOf(SECTION), page.indexOf('\n## ', page.indexOf(SECTION) + 4));
  const blocks = [...section.matchAll(/^```(sh|ts)\n([\s\S]*?)^```$/gm)].map(([, lang, body]) => ({
    lang,
    body: body!,
  }));
  expect(blocks.map((b) => b.lang)).toEqual(['sh', 'ts', 'sh']);
  return { setup: blocks[0]!.body, tour: blocks[1]!.body, start: blocks[2]!.body };
}

/**
 * docs/client.md's tour, run as printed: the set-up in bash from the checkout (npm pack into a new folder
 * under a HOME of the test's own, `npm init`, `npm pkg set type=module`, `npm install` of the tarball
 * and tsx), the tour saved as tour.ts there, type-checked against the installed package (strict), and
 * started with the page's command line against a real gateway. npm keeps using the machine's cache
 * (npm_config_cache), preferring what is in it (npm_config_prefer_offline): the commands themselves are
 * the page's.
 */
describe('docs/client.md: the tour with the TypeScript client, in an empty folder', () => {
  let home: string;
  let folder: string;
  let database: TestDatabase;
  let gw: Gateway;
  let npmEnv: NodeJS.ProcessEnv;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'msv3-client-tour-'));
    folder = join(home, 'msv3-tour');
    npmEnv = {
      PATH: process.env.PATH,
      HOME: home,
      npm_config_cache: execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim(),
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      // Set by scripts/with-node.sh under another node, whose npm would miss the machine's settings (a CA
      // file for a proxy, say) and fail to download tsx where the cache does not hold it yet.
      ...(process.env.npm_config_globalconfig === undefined
        ? {}
        : { npm_config_globalconfig: process.env.npm_config_globalconfig }),
    };
    database = await createTestDatabase('sqlite');
    gw = await startGateway({ database });
  });
  afterAll(async () => {
    await gw?.close();
    await database?.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  it('sets the folder up as printed: an ES module with the client and tsx, nothing left in the checkout', {
    timeout: 180_000,
  }, async () => {
    const tarballs = () => readdirSync(ROOT).filter((name) => name.endsWith('.tgz'));
    const before = tarballs();
    const setup = await whilePackingClient(() => bash(tourSection().setup, ROOT, npmEnv));
    expect(setup.code, `${setup.stderr}\n${setup.stdout}`).toBe(0);
    expect(JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))).toMatchObject({ type: 'module' });
    for (const installed of ['node_modules/@msv3-gateway/client/dist/index.js', 'node_modules/.bin/tsx'])
      expect(existsSync(join(folder, installed)), installed).toBe(true);
    // The tarball went to the tour's folder, not into the checkout.
    expect(readdirSync(folder)).toContain('msv3-gateway-client-0.1.0.tgz');
    expect(tarballs()).toEqual(before);
  });

  it('type-checks against the installed package (strict)', { timeout: 60_000 }, async () => {
    writeFileSync(join(folder, 'tour.ts'), tourSection().tour);
    const tsconfig = join(home, 'tsconfig.tour.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          typeRoots: [join(ROOT, 'node_modules/@types')],
          types: ['node'],
        },
        files: [join(folder, 'tour.ts')],
      }),
    );
    await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', tsconfig]);
  });

  it('runs with the page’s command line against a real gateway and prints what the page promises', {
    timeout: 60_000,
  }, async () => {
    writeFileSync(join(folder, 'tour.ts'), tourSection().tour);
    const url = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    const start = tourSection().start.replace(PAGE_URL, url).replace(PAGE_KEY, gw.keys.test.secret);
    expect(start).not.toBe(tourSection().start);
    const { code, stdout, stderr } = await bash(start, folder, npmEnv);
    expect(code, stderr).toBe(0);
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

function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
