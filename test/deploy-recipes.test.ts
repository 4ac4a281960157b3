import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { listSettings } from '../src/config.js';

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
    expect(instructions.filter((i) => i.keyword === 'FROM').at(-1)!.args).toBe('node:20-bookworm-slim');
    // The compiled better-sqlite3 must load in the final stage: the same Debian release.
    expect(instructions.find((i) => i.keyword === 'FROM')!.args).toMatch(/^node:20-bookworm(\s|$)/);
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
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
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
      expect(service.healthcheck?.test?.join(' ')).toContain('/v1/health/ready');
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
