import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedLoopbackPort } from './closed-port.js';
import { postgresUrl } from './db.js';
import { type PostgresInstance, postgresUnavailable, startPostgresInstance } from './postgres-instance.js';

/**
 * A database that cannot be opened, as an operator meets it: `serve`, `migrate` and `keys list` run as
 * real processes (`node --import tsx src/cli.ts …`) against a real PostgreSQL. Each must exit 1 with one
 * line that names DATABASE_URL without its password and says the cause in words (docs/operating.md
 * "When the database cannot be opened"). The three commands share the one way of opening the database
 * (`databaseStartError`), so each cause runs with one of them, each command with two causes. The shared
 * server (TEST_DATABASE_URL) only answers logins for a role and a database that do not exist; a wrong
 * password needs a server of this test's own whose pg_hba.conf asks for one (scram-sha-256).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PASSWORD = 'S3cret:p@ss/w%rd';

interface Ended {
  code: number | null;
  stderr: string;
  stdout: string;
}

function runCli(args: readonly string[], env: Record<string, string>): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // `serve` that wrongly started would never end by itself.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The command with `url` exits 1 with the expected line on stderr, and never shows `secret`. */
async function expectRefusal(
  command: readonly string[],
  url: string,
  expected: { shown: string; cause: RegExp; secret?: string },
): Promise<void> {
  const ended = await runCli(command, { DATABASE_URL: url });
  const what = `${command.join(' ')}: ${ended.stderr}`;
  expect(ended.code, what).toBe(1);
  expect(ended.stderr, what).toContain(`msv3-gateway: DATABASE_URL ${expected.shown}: `);
  expect(ended.stderr, what).toMatch(expected.cause);
  expect(ended.stderr, what).not.toMatch(/\n\s+at /); // no stack trace
  if (expected.secret !== undefined) {
    expect(ended.stderr + ended.stdout, what).not.toContain(expected.secret);
    expect(ended.stderr + ended.stdout, what).not.toContain(encodeURIComponent(expected.secret));
  }
}

describe('a database that cannot be opened: serve, migrate and keys say why (real processes)', () => {
  it('nothing listening on the port', { timeout: 60_000 }, async () => {
    const port = await closedLoopbackPort();
    await expectRefusal(['serve'], `postgres://msv3:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/msv3`, {
      shown: `postgres://msv3@127.0.0.1:${port}/msv3`,
      cause: new RegExp(`nothing listening: no server accepts connections at 127\\.0\\.0\\.1:${port}`),
      secret: PASSWORD,
    });
  });

  it('an unknown host', { timeout: 60_000 }, async () => {
    await expectRefusal(['keys', 'list'], 'postgres://msv3@db.invalid:5432/msv3', {
      shown: 'postgres://msv3@db.invalid:5432/msv3',
      cause: /unknown host: DNS (has no address|did not answer) for db\.invalid/,
    });
  });

  describe('on the shared PostgreSQL (TEST_DATABASE_URL)', () => {
    const shared = postgresUrl();
    if (shared === undefined) {
      it.skip('skipped: TEST_DATABASE_URL is not set', () => {});
      return;
    }
    const { host } = new URL(shared);
    const suffix = `${process.pid}_${Date.now() % 100_000}`;

    it('an unknown role', { timeout: 60_000 }, async () => {
      const url = `postgres://msv3_nobody_${suffix}:${encodeURIComponent(PASSWORD)}@${host}/test`;
      await expectRefusal(['migrate'], url, {
        shown: `postgres://msv3_nobody_${suffix}@${host}/test`,
        cause: new RegExp(`unknown role: the server has no role "msv3_nobody_${suffix}"`),
        secret: PASSWORD,
      });
    });

    it('a missing database', { timeout: 60_000 }, async () => {
      const base = new URL(shared);
      base.pathname = `/msv3_missing_${suffix}`;
      await expectRefusal(['serve'], base.toString(), {
        shown: base.toString(),
        cause: new RegExp(`database missing: there is no database "msv3_missing_${suffix}"`),
      });
    });
  });

  describe('on a PostgreSQL of its own that asks for a password', () => {
    const unavailable = postgresUnavailable();
    if (unavailable !== undefined) {
      it.skip(`skipped: ${unavailable}`, () => {});
      return;
    }
    let postgres: PostgresInstance;
    beforeAll(async () => {
      postgres = await startPostgresInstance({ password: PASSWORD });
    }, 60_000);
    afterAll(async () => {
      await postgres?.dispose();
    });

    it('a wrong password', { timeout: 60_000 }, async () => {
      const wrong = 'not-the:p@ssword';
      await expectRefusal(
        ['keys', 'list'],
        `postgres://postgres:${encodeURIComponent(wrong)}@127.0.0.1:${postgres.port}/postgres`,
        {
          shown: `postgres://postgres@127.0.0.1:${postgres.port}/postgres`,
          cause: /wrong password: the server refused the password of role "postgres"/,
          secret: wrong,
        },
      );
    });

    it('no password where one is needed, and the right one works', { timeout: 60_000 }, async () => {
      const missing = await runCli(['migrate'], {
        DATABASE_URL: `postgres://postgres@127.0.0.1:${postgres.port}/postgres`,
      });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('password missing: the server asks for a password');
      const right = await runCli(['migrate'], { DATABASE_URL: postgres.url });
      expect(right.stderr).toBe('');
      expect(right.code).toBe(0);
    });
  });
});
