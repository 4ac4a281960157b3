import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { listSettings } from '../src/config.js';
import { postgresUnavailable, startPostgresInstance } from './postgres-instance.js';

/**
 * The deployment recipes of docs/operating.md cannot run here (no Docker engine), so their structure is
 * checked instead, against the sources they must agree with: `npm start`'s node flags, the build script
 * CI runs, the default SHUTDOWN_TIMEOUT_MS, the package's own bin.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};
/** `npm start` as argv: node, its flags, the CLI file, `serve`. */
const startArgv = pkg.scripts.start!.split(' ');
const shutdownTimeoutMs = Number(listSettings().find((s) => s.env === 'SHUTDOWN_TIMEOUT_MS')!.schema.default);

interface Instruction {
  stage: number;
  keyword: string;
  args: string;
}

/** Dockerfile instructions (continuation lines joined, comments dropped), each with its stage's index. */
function dockerInstructions(text: string): Instruction[] {
  const logical = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  let stage = -1;
  return logical.map((line) => {
    const [keyword, ...rest] = line.split(/\s+/);
    if (keyword!.toUpperCase() === 'FROM') stage++;
    return { stage, keyword: keyword!.toUpperCase(), args: rest.join(' ') };
  });
}

describe('Dockerfile', () => {
  const instructions = dockerInstructions(read('Dockerfile'));
  const lastStage = Math.max(...instructions.map((i) => i.stage));
  const final = instructions.filter((i) => i.stage === lastStage);
  const build = instructions.filter((i) => i.stage < lastStage);

  it('builds with the script CI runs, and CI installs with nothing else', () => {
    expect(build.filter((i) => i.keyword === 'RUN').map((i) => i.args)).toContainEqual(
      expect.stringMatching(/^scripts\/build\.sh\b/),
    );
    const ci = read('.ci/run')
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'));
    expect(ci.filter((line) => /^\s*scripts\/build\.sh\b/.test(line))).toHaveLength(1);
    expect(ci.filter((line) => /^\s*npm (ci|install)\b/.test(line))).toEqual([]);
    const script = read('scripts/build.sh');
    expect(script).toMatch(/^npm ci\b/m);
    expect(script).toMatch(/^npm pack\b/m);
    expect(pkg.scripts.prepack).toBe('npm run build');
  });

  it('starts the gateway as npm start does, as a non-root user on 0.0.0.0 with a health check', () => {
    // Node 24, the primary release (docs/operating.md "Supported Node.js releases").
    expect(instructions.filter((i) => i.keyword === 'FROM').at(-1)!.args).toBe('node:24-bookworm-slim');
    // The compiled better-sqlite3 must load in the final stage: the same Debian release and Node.
    expect(instructions.find((i) => i.keyword === 'FROM')!.args).toMatch(/^node:24-bookworm(\s|$)/);
    const cmd = final.filter((i) => i.keyword === 'CMD').at(-1)!;
    expect(JSON.parse(cmd.args)).toEqual(startArgv);
    expect(startArgv[0]).toBe('node');
    expect(startArgv.slice(-2)).toEqual([pkg.bin['msv3-gateway'], 'serve']);
    const user = final.filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    const env = final.filter((i) => i.keyword === 'ENV').map((i) => i.args);
    expect(env.join(' ')).toMatch(/\bHOST=0\.0\.0\.0\b/);
    expect(env.join(' ')).toMatch(/\bDATABASE_URL=sqlite:\/data\//);
    expect(final.find((i) => i.keyword === 'VOLUME')?.args).toContain('/data');
    const healthcheck = final.find((i) => i.keyword === 'HEALTHCHECK')!.args;
    expect(healthcheck).toContain('/v1/health');
    expect(healthcheck).not.toContain('curl');
  });

  it('leaves local installs and outputs out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', '.git']) expect(ignored).toContain(entry);
  });
});

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  stop_grace_period?: string;
  profiles?: string[];
}

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  const { services } = compose;
  const replicas = Object.keys(services).filter((name) => name.startsWith('gateway-'));

  it('runs two gateway replicas on PostgreSQL and Redis, without a first-start key', () => {
    expect(replicas).toHaveLength(2);
    expect(services.postgres?.image).toMatch(/^postgres:/);
    expect(services.redis?.image).toMatch(/^redis:/);
    for (const name of replicas) {
      const env = services[name]!.environment!;
      // DATABASE_URL is made by the entrypoint, the password encoded (see below).
      expect(env.DATABASE_URL).toBeUndefined();
      expect(env.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
      expect(services[name]!.command).toEqual(startArgv);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(env.CREATE_FIRST_KEY).toBe('false');
      expect(env.METRICS_TOKEN).toMatch(/^\$\{METRICS_TOKEN:\?/);
      // The built-in sandbox keeps its state in the shared database: no separate mock service.
      expect(env.SANDBOX_URL).toBeUndefined();
      expect(services[name]!.build).toEqual({ context: '..', dockerfile: 'Dockerfile' });
    }
    expect(existsSync(join(ROOT, 'deploy', '..', 'Dockerfile'))).toBe(true);
  });

  it('starts a replica only after its dependencies are healthy and the migrations ran once', () => {
    for (const name of replicas) {
      const service = services[name]!;
      expect(service.depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      });
      // On the probes' own port (docs/operating.md "Health probes on a port of their own").
      expect(service.healthcheck?.test?.join(' ')).toContain(
        `127.0.0.1:${service.environment!.HEALTH_PORT}/v1/health/ready`,
      );
      expect(parseSeconds(service.stop_grace_period!) * 1000).toBeGreaterThan(shutdownTimeoutMs);
    }
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(services[dependency], `${name} depends on ${dependency}`).toBeDefined();
        if (condition === 'service_healthy') {
          expect(services[dependency]!.healthcheck?.test, `${dependency} needs a healthcheck`).toBeDefined();
        }
      }
    }
    expect(services.migrate?.command).toEqual(['node', pkg.bin['msv3-gateway'], 'migrate']);
    expect(services.sandbox).toBeUndefined();
  });
});

/**
 * What Compose hands the container for a list-form entrypoint: `$$` is a literal `$`; a lone `$` would
 * be Compose's own interpolation, which the entrypoint must not use (the password would be pasted in raw).
 */
function composeInterpolated(text: string): string {
  expect(text.replaceAll('$$', '')).not.toContain('$');
  return text.replaceAll('$$', '$');
}

/** Runs a service's entrypoint as its container would, with `args` as the command. */
function runEntrypoint(
  entrypoint: string[],
  args: string[],
  options: { cwd: string; password: string },
): { status: number | null; stdout: string; stderr: string } {
  const [shell, flag, script, name] = entrypoint.map(composeInterpolated);
  expect([shell, flag]).toEqual(['/bin/sh', '-c']);
  return spawnSync(shell!, [flag!, script!, name!, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, POSTGRES_PASSWORD: options.password },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('deploy/compose.yaml: POSTGRES_PASSWORD with any character', () => {
  const { services } = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  // Everything a URL or a shell could trip over.
  const password = 'p@ss:w/rd%2F#?&= "q\'`$HOME`\\';
  const printUrl = [process.execPath, '-e', 'process.stdout.write(process.env.DATABASE_URL)'];

  it('reaches every gateway service as one DATABASE_URL whose password decodes to it', () => {
    const gateways = Object.entries(services).filter(([, service]) => service.image === 'msv3-gateway:local');
    expect(gateways.map(([name]) => name).sort()).toEqual(['cli', 'gateway-a', 'gateway-b', 'migrate']);
    for (const [name, service] of gateways.filter(([name]) => name !== 'cli')) {
      const ran = runEntrypoint(service.entrypoint!, printUrl, { cwd: ROOT, password });
      expect(ran.status, `${name}: ${ran.stderr}`).toBe(0);
      const url = new URL(ran.stdout);
      expect(`${url.protocol}//${url.username}@${url.host}${url.pathname}`).toBe(
        'postgres://msv3@postgres:5432/msv3',
      );
      expect(decodeURIComponent(url.password)).toBe(password);
    }
    // `cli` passes its arguments to the gateway's command line (dist/cli.js in the image).
    const image = mkdtempSync(join(tmpdir(), 'msv3-compose-cli-'));
    try {
      mkdirSync(join(image, 'dist'));
      writeFileSync(
        join(image, 'dist', 'cli.js'),
        'process.stdout.write(JSON.stringify({ url: process.env.DATABASE_URL, args: process.argv.slice(2) }))',
      );
      const ran = runEntrypoint(services.cli!.entrypoint!, ['keys', 'create', '--name', 'A B'], {
        cwd: image,
        password,
      });
      expect(ran.status, ran.stderr).toBe(0);
      const { url, args } = JSON.parse(ran.stdout) as { url: string; args: string[] };
      expect(decodeURIComponent(new URL(url).password)).toBe(password);
      expect(args).toEqual(['keys', 'create', '--name', 'A B']);
    } finally {
      rmSync(image, { recursive: true, force: true });
    }
  });

  const unavailable = postgresUnavailable();
  it.skipIf(unavailable !== undefined)(
    `lets migrate log in to a real PostgreSQL with that password${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
    { timeout: 120_000 },
    async () => {
      const postgres = await startPostgresInstance({ password });
      try {
        const admin = new pg.Client({ connectionString: postgres.url });
        await admin.connect();
        await admin.query(`create role msv3 login password ${admin.escapeLiteral(password)}`);
        await admin.query('create database msv3 owner msv3');
        await admin.end();
        const made = runEntrypoint(services.migrate!.entrypoint!, printUrl, { cwd: ROOT, password });
        // The container reaches PostgreSQL as `postgres:5432`; this machine at its loopback port.
        const url = made.stdout.replace('@postgres:5432/', `@127.0.0.1:${postgres.port}/`);
        const migrated = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], {
          cwd: ROOT,
          env: { PATH: process.env.PATH, DATABASE_URL: url },
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(migrated.stderr).toBe('');
        expect(migrated.stdout).toMatch(/^Applied: 001_accounts_and_keys/);
        expect(migrated.status).toBe(0);
      } finally {
        await postgres.dispose();
      }
    },
  );
});

describe('deploy/msv3-gateway.service', () => {
  const unit = read('deploy/msv3-gateway.service');
  const setting = (name: string) =>
    unit
      .split('\n')
      .filter((line) => line.startsWith(`${name}=`))
      .map((line) => line.slice(name.length + 1));

  it('runs serve with npm start’s node flags, restarts on failure and stops after SHUTDOWN_TIMEOUT_MS', () => {
    const execStart = setting('ExecStart')[0]!.split(' ');
    expect(execStart[0]).toMatch(/\/node$/);
    expect(execStart.slice(1, -2)).toEqual(startArgv.slice(1, -2));
    expect(execStart.at(-2)).toMatch(new RegExp(`/node_modules/msv3-gateway/${pkg.bin['msv3-gateway']}$`));
    expect(execStart.at(-1)).toBe('serve');
    expect(setting('Restart')).toEqual(['on-failure']);
    expect(parseSeconds(setting('TimeoutStopSec')[0]!) * 1000).toBeGreaterThan(shutdownTimeoutMs);
  });

  it('runs as its own user with the environment file and writes only to its data folder', () => {
    expect(setting('User')).toEqual(['msv3-gateway']);
    expect(setting('EnvironmentFile')).toEqual(['/etc/msv3-gateway/environment']);
    expect(setting('NoNewPrivileges')).toEqual(['yes']);
    expect(setting('ProtectSystem')).toEqual(['strict']);
    expect(setting('ReadWritePaths')).toEqual(['/var/lib/msv3-gateway']);
    // V8 needs writable executable memory: this hardening option would crash node.
    expect(setting('MemoryDenyWriteExecute')).not.toContain('yes');
  });

  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  it.skipIf(analyze.status !== 0)(
    `passes systemd-analyze verify${analyze.status === 0 ? '' : ' (skipped: systemd-analyze is not installed)'}`,
    () => {
      const folder = mkdtempSync(join(tmpdir(), 'msv3-unit-'));
      try {
        copyFileSync(join(ROOT, 'deploy/msv3-gateway.service'), join(folder, 'msv3-gateway.service'));
        const verified = spawnSync('systemd-analyze', ['verify', './msv3-gateway.service'], {
          cwd: folder,
          encoding: 'utf8',
          timeout: 60_000,
        });
        // Problems in the unit are reported as `<file>:<line>: …` lines (and do not change the exit code).
        expect(`${verified.stdout}${verified.stderr}`).not.toContain('msv3-gateway.service:');
        expect(verified.status).toBe(0);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  );
});

describe('npm run start:bounded-memory (docs/configuration.md)', () => {
  const argv = pkg.scripts['start:bounded-memory']!.split(' ');
  const flags = argv.slice(1, -2);

  it('starts the same CLI as npm start, with node flags the documentation names', () => {
    expect(argv.slice(-2)).toEqual(startArgv.slice(-2));
    const documented = read('docs/configuration.md');
    expect(documented).toContain(`\`${pkg.scripts['start:bounded-memory']}\``);
  });

  it('gives V8 the heap limit its flags say, so node accepts both', () => {
    const flag = (name: string) => Number(new RegExp(`--${name}=(\\d+)`).exec(flags.join(' '))?.[1]);
    const printed = spawnSync(
      process.execPath,
      [...flags, '-e', 'console.log(require("node:v8").getHeapStatistics().heap_size_limit)'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(printed.stderr).toBe('');
    // V8's limit: the old generation's plus the young generation's (three semi-spaces' worth).
    const expectedMb = flag('max-old-space-size') + 3 * flag('max-semi-space-size');
    expect(Number(printed.stdout.trim()) / 2 ** 20).toBe(expectedMb);
  });

  it('documents a container command with the same flags, since NODE_OPTIONS loses to the image command', () => {
    const heapLimitMb = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      Number(
        spawnSync(
          process.execPath,
          [...args, '-e', 'console.log(require("node:v8").getHeapStatistics().heap_size_limit)'],
          { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } },
        ).stdout.trim(),
      ) /
      2 ** 20;
    const documented = /`command: (\[.*?\])`/.exec(read('docs/configuration.md'))?.[1];
    const command = JSON.parse(documented!) as string[];
    expect(command.slice(-2)).toEqual(startArgv.slice(-2));
    expect(command.slice(1, -2)).toEqual(flags);
    // Why the documentation says to replace the command: the image's own flag wins over NODE_OPTIONS.
    const imageFlags = startArgv.slice(1, -2);
    expect(heapLimitMb(imageFlags, { NODE_OPTIONS: flags.join(' ') })).not.toBe(heapLimitMb(flags));
  });
});

/** `15s`, `20s`, `2min`, or bare seconds, as Docker Compose and systemd write durations. */
function parseSeconds(text: string): number {
  const match = /^(\d+)(s|min|m)?$/.exec(text.trim());
  if (match === null) throw new Error(`unreadable duration ${text}`);
  return Number(match[1]) * (match[2] === 'min' || match[2] === 'm' ? 60 : 1);
}
