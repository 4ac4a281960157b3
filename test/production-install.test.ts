import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './until.js';

/**
 * The production install of docs/operating.md, as an operator does it: `npm pack` (its `prepack` builds
 * dist/), then the tarball installed with `npm install --omit=dev` into an empty folder outside the
 * project, then `msv3-gateway migrate` and `msv3-gateway serve` from there. The tarball carries its
 * dependencies (`bundleDependencies`), so the install is the tree this checkout was tested with: every
 * production package of package-lock.json, at its place and version, and nothing else.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * Slow with PRODUCTION_INSTALL_COMPILE=1: where better-sqlite3 cannot download its prebuilt binary, it
 * compiles SQLite from source, about 90 s of CPU time; on a busy 2-core machine (load 13) the whole
 * install took 6 minutes.
 */
const INSTALL_TIMEOUT_MS = 25 * 60_000;
/**
 * By default the install skips install scripts and takes better-sqlite3's compiled addon from this
 * checkout (the same version, built the same way): seconds instead of a minute of compiling SQLite,
 * which tests nothing of this package. Every file else comes from the tarball and the registry, as in
 * production.
 */
const COMPILE_NATIVE = process.env.PRODUCTION_INSTALL_COMPILE === '1';

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** npm's environment: this one (proxies, CA certificates) without the npm_* variables of a surrounding `npm test`. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

/** The gateway's environment: exactly the settings given, as on a fresh host. */
function gatewayEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...settings };
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout also stops what it started (a compiler, say).
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: 'pipe', detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      const output = `${stdout}\n${stderr}`.slice(-4_000);
      reject(new Error(`${command} ${args.join(' ')} took over ${options.timeoutMs} ms:\n${output}`));
    }, options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('production install from the packed tarball', () => {
  let folder: string;
  let server: ChildProcess | undefined;

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-install-'));
  });

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGKILL');
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  });

  it('bundles every production dependency, so that the tarball carries the locked tree', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      bundleDependencies: string[];
    };
    expect([...pkg.bundleDependencies].sort()).toEqual(Object.keys(pkg.dependencies).sort());
  });

  it('(slow) installs with --omit=dev into an empty folder, migrates, serves and answers with the first key', {
    timeout: INSTALL_TIMEOUT_MS + 5 * 60_000,
  }, async () => {
    // Packing runs `prepack` (the build); the tarball holds the built code and nothing for tests.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', folder], {
      cwd: ROOT,
      env: npmEnv(),
      timeoutMs: 3 * 60_000,
    });
    expect(packed.code, packed.stderr).toBe(0);
    const [manifest] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    // Its own files, and its production dependencies beneath node_modules/ (bundled).
    const all = manifest!.files.map((f) => f.path);
    const files = all.filter((f) => !f.startsWith('node_modules/'));
    expect(files).toEqual(expect.arrayContaining(['dist/cli.js', 'config/wholesalers.json', 'README.md']));
    expect(files.filter((f) => !f.startsWith('dist/'))).toEqual(
      expect.arrayContaining(['README.md', 'config/wholesalers.json', 'package.json']),
    );
    expect(files.filter((f) => !f.startsWith('dist/'))).toHaveLength(3);
    expect(files.filter((f) => /\.test\.|test-support|fixtures|\.map$/.test(f))).toEqual([]);
    expect(all).toContain('node_modules/fastify/package.json');
    expect(all.filter((f) => /^node_modules\/(typescript|vitest|tsx|@biomejs)\//.test(f))).toEqual([]);

    // An empty folder with no node_modules above it: nothing from the project can fill a gap.
    const app = join(folder, 'app');
    mkdirSync(app);
    for (let up = folder; up !== dirname(up); up = dirname(up)) {
      expect(existsSync(join(up, 'node_modules')), `${up}/node_modules must not exist`).toBe(false);
    }
    const installed = await run(
      'npm',
      [
        'install',
        '--omit=dev',
        '--no-audit',
        '--no-fund',
        ...(COMPILE_NATIVE ? [] : ['--ignore-scripts']),
        '--prefix',
        app,
        join(folder, manifest!.filename),
      ],
      { cwd: app, env: npmEnv(), timeoutMs: INSTALL_TIMEOUT_MS },
    );
    expect(installed.code, installed.stderr).toBe(0);
    // The package's own dependencies come with it, beneath it.
    const own = join(app, 'node_modules', 'msv3-gateway');
    if (!COMPILE_NATIVE) {
      const addon = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
      mkdirSync(dirname(join(own, addon)), { recursive: true });
      cpSync(join(ROOT, addon), join(own, addon));
    }
    expect(readdirSync(join(app, 'node_modules')).filter((m) => !m.startsWith('.'))).toEqual([
      'msv3-gateway',
    ]);
    const tree = installedTree(own);
    const locked = lockedProductionTree();
    expect(tree.size).toBeGreaterThan(100);
    // Optional packages for other platforms (pg-cloudflare) may be left out; nothing else may differ.
    const missing = [...locked].filter(([path]) => !tree.has(path)).map(([path]) => path);
    expect(missing.filter((path) => !lockedOptional.has(path))).toEqual([]);
    expect([...tree].filter(([path, version]) => locked.get(path) !== version)).toEqual([]);
    const names = [...tree.keys()].map((path) => path.split('node_modules/').at(-1));
    expect(names).toContain('better-sqlite3');
    expect(names.filter((m) => ['typescript', 'tsx', 'vitest', '@biomejs/biome'].includes(m!))).toEqual([]);

    const bin = join(app, 'node_modules/.bin/msv3-gateway');
    const env = gatewayEnv({ DATABASE_URL: `sqlite:${join(folder, 'gateway.db')}` });
    const help = await run(bin, ['keys', '--help'], { cwd: app, env, timeoutMs: 60_000 });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('keys create --name NAME --mode test|live');

    const migrated = await run(bin, ['migrate'], { cwd: app, env, timeoutMs: 60_000 });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/^Applied: 001_accounts_and_keys, /);

    const started = spawn(bin, ['serve'], {
      cwd: app,
      env: { ...env, HOST: '127.0.0.1', PORT: '0', WHOLESALER_PROBE_INTERVAL_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = started;
    let stdout = '';
    let stderr = '';
    started.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    started.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const url = await until(
      () => `the address; stderr:\n${stderr}`,
      () => /listening on (http:\/\/\S+)/.exec(stderr)?.[1],
      60_000,
      50,
    );
    const key = await until(
      () => `the key; stdout:\n${stdout}`,
      () => /^ {2}(pk_test_\S+)$/m.exec(stdout)?.[1],
      5_000,
      50,
    );

    const health = await fetch(`${url}/v1/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    expect((await fetch(`${url}/v1/health/ready`)).status).toBe(200);
    const wholesalers = await fetch(`${url}/v1/wholesalers`, { headers: { 'x-api-key': key } });
    expect(wholesalers.status).toBe(200);
    const { wholesalers: list } = (await wholesalers.json()) as { wholesalers: { id: string }[] };
    expect(list.map((w) => w.id)).toContain('phoenix');

    const exited = new Promise<number | null>((resolve) => started.once('exit', resolve));
    started.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; optional?: boolean; link?: boolean }>;
};
const lockedOptional = new Set(
  Object.entries(lock.packages)
    .filter(([, entry]) => entry.optional)
    .map(([path]) => path),
);

/** package-lock.json's production packages: path (`node_modules/a/node_modules/b`) → version. */
function lockedProductionTree(): Map<string, string> {
  const tree = new Map<string, string>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith('node_modules/') && !entry.dev && !entry.link) tree.set(path, entry.version!);
  }
  return tree;
}

/** The packages installed beneath `root`, as paths relative to it → the version in their package.json. */
function installedTree(root: string, below = ''): Map<string, string> {
  const tree = new Map<string, string>();
  const folder = join(root, below, 'node_modules');
  if (!existsSync(folder)) return tree;
  for (const entry of readdirSync(folder).filter((name) => !name.startsWith('.'))) {
    const names = entry.startsWith('@')
      ? readdirSync(join(folder, entry)).map((n) => `${entry}/${n}`)
      : [entry];
    for (const name of names) {
      const path = below === '' ? `node_modules/${name}` : `${below}/node_modules/${name}`;
      const manifest = join(root, path, 'package.json');
      if (!existsSync(manifest)) continue;
      tree.set(path, (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version);
      for (const [inner, version] of installedTree(root, path)) tree.set(inner, version);
    }
  }
  return tree;
}
