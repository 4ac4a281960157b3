import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { closedLoopbackPort } from '../test/closed-port.js';
import { until } from '../test/until.js';
import { type CliIo, runCli } from './cli.js';
import { MIGRATIONS } from './store/migrations/index.js';

function captureIo(env: NodeJS.ProcessEnv): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { env, out, err, stdout: (line) => out.push(line), stderr: (line) => err.push(line) };
}

const folder = mkdtempSync(join(tmpdir(), 'msv3-cli-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('msv3-gateway keys', () => {
  let env: NodeJS.ProcessEnv;
  let run: (...argv: string[]) => Promise<{ code: number; out: string[]; err: string[] }>;
  beforeEach(({ task }) => {
    env = { DATABASE_URL: `sqlite:${join(folder, task.id, 'gateway.db')}` };
    run = async (...argv) => {
      const io = captureIo(env);
      const code = await runCli(argv, io);
      return { code, out: io.out, err: io.err };
    };
  });

  it('creates a key in a new account and prints the secret once', async () => {
    const { code, out } = await run('keys', 'create', '--name', 'Apotheke Nord', '--mode', 'live');
    expect(code).toBe(0);
    expect(out[0]).toMatch(/^Created live key key_\w+ "Apotheke Nord" in account acct_\w+\./);
    expect(out[1]).toMatch(/^pk_live_[0-9A-Za-z]{36}$/);
  });

  it('adds a key to an existing account, as JSON', async () => {
    const first = JSON.parse(
      (await run('keys', 'create', '--name', 'a', '--mode', 'test', '--json')).out[0]!,
    );
    const second = await run(
      'keys',
      'create',
      '--name',
      'b',
      '--mode',
      'test',
      '--account',
      first.account_id,
      '--json',
    );
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out[0]!)).toMatchObject({
      account_id: first.account_id,
      mode: 'test',
      name: 'b',
    });
  });

  it('refuses an unknown account', async () => {
    const { code, err } = await run(
      'keys',
      'create',
      '--name',
      'x',
      '--mode',
      'test',
      '--account',
      'acct_none',
    );
    expect(code).toBe(1);
    expect(err.join('\n')).toContain('no account acct_none');
  });

  it('lists keys without their secrets', async () => {
    const created = JSON.parse(
      (await run('keys', 'create', '--name', 'ci', '--mode', 'test', '--json')).out[0]!,
    );
    const { code, out } = await run('keys', 'list');
    expect(code).toBe(0);
    expect(out[0]).toMatch(/^ID\s+ACCOUNT\s+MODE\s+KEY/);
    expect(out[1]).toContain(created.id);
    expect(out[1]).toContain(`${created.key.slice(0, 12)}…${created.key.slice(-4)}`);
    expect(out[1]).toMatch(/never\s+active$/);
    expect(out.join('\n')).not.toContain(created.key);
  });

  it('revokes a key, and says so again without failing', async () => {
    const created = JSON.parse(
      (await run('keys', 'create', '--name', 'r', '--mode', 'test', '--json')).out[0]!,
    );
    const revoked = await run('keys', 'revoke', created.id);
    expect(revoked).toMatchObject({
      code: 0,
      out: [expect.stringMatching(/^Revoked key_\w+ \(pk_test_\w{4}…\w{4}\)\.$/)],
    });
    expect((await run('keys', 'revoke', created.id)).out[0]).toContain('was already revoked at');
    const listed = JSON.parse((await run('keys', 'list', '--json')).out[0]!);
    expect(listed[0].revokedAt).toEqual(expect.any(Number));
  });

  it('fails for an unknown key id', async () => {
    const { code, err } = await run('keys', 'revoke', 'key_nope');
    expect(code).toBe(1);
    expect(err.at(-1)).toMatch(/^msv3-gateway: no API key key_nope \(name a key by its id/);
  });

  it('explains wrong usage with exit code 2', async () => {
    expect((await run('keys', 'create', '--name', 'x')).code).toBe(2);
    expect((await run('keys', 'create', '--name', 'x', '--mode', 'prod')).err[0]).toContain(
      '--mode must be test or live',
    );
    expect((await run('keys', 'create', '--bogus')).err[0]).toContain("Unknown option '--bogus'");
    expect((await run('keys', 'revoke')).code).toBe(2);
    expect((await run('keys', 'rotate')).err[0]).toContain('unknown command "keys rotate"');
  });

  it('explains the keys commands with keys --help, and each one with its own --help', async () => {
    const group = await run('keys', '--help');
    expect(group.code).toBe(0);
    for (const command of ['keys create', 'keys list', 'keys revoke KEY_ID|KEY', 'keys roll'])
      expect(group.out.join('\n')).toContain(command);
    expect((await run('keys')).code).toBe(2);
    for (const sub of ['create', 'list', 'revoke', 'roll']) {
      const one = await run('keys', sub, '--help');
      expect(one.code).toBe(0);
      expect(one.out[0]).toMatch(new RegExp(`^Usage: msv3-gateway keys ${sub}`));
    }
  });

  it('revokes a key named by the key itself, and names both ways when it finds none', async () => {
    const created = JSON.parse(
      (await run('keys', 'create', '--name', 'a', '--mode', 'test', '--json')).out[0]!,
    );
    expect(await run('keys', 'revoke', created.key)).toMatchObject({
      code: 0,
      out: [expect.stringMatching(/^Revoked key_/)],
    });
    expect((await run('keys', 'list', '--json')).out[0]).toContain('"revokedAt":');
    const unknown = await run('keys', 'revoke', 'pk_test_000000000000000000000000000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toContain('by its id, key_…, as keys list shows, or by the key itself');
    expect(unknown.err[0]).not.toContain('pk_test_000000000000000000000000000000000000');
  });

  it('rolls a key: a new key at once, the old one valid for the overlap, then refused', async () => {
    const old = JSON.parse(
      (await run('keys', 'create', '--name', 'erp', '--mode', 'live', '--json')).out[0]!,
    );
    const rolled = await run('keys', 'roll', old.id, '--overlap', '2h', '--json');
    expect(rolled.code).toBe(0);
    const answer = JSON.parse(rolled.out[0]!);
    expect(answer).toMatchObject({ account_id: old.account_id, mode: 'live', name: 'erp', replaces: old.id });
    expect(answer.key).toMatch(/^pk_live_/);
    const until = Date.parse(answer.old_key_valid_until);
    expect(until - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(2 * 3_600_000);
    const listed = (await run('keys', 'list')).out.join('\n');
    expect(listed).toContain('active until');
    // A shorter overlap later wins; a longer one never extends it.
    await run('keys', 'roll', old.key, '--overlap', '0');
    expect((await run('keys', 'list')).out.find((line) => line.startsWith(old.id))).toMatch(/revoked \d{4}-/);
    expect((await run('keys', 'roll', old.id)).code).toBe(1);
    expect((await run('keys', 'roll', answer.id, '--overlap', 'soon')).code).toBe(2);
  });

  it('warns when a key command would start from a database file that does not exist', async () => {
    const listed = await run('keys', 'list');
    expect(listed.code).toBe(0);
    expect(listed.err[0]).toMatch(/^msv3-gateway: warning: there is no database at \/.*gateway\.db yet/);
    expect((await run('keys', 'list')).err).toEqual([]);
  });

  it('names the bad variable of a configuration error and exits 1', async () => {
    env = { ...env, PORT: 'eighty' };
    const { code, err } = await run('migrate');
    expect(code).toBe(1);
    expect(err[0]).toBe('msv3-gateway: configuration error: PORT must be integer (got "eighty")');
  });

  it('warns about a variable that looks like a misspelt setting, and refuses it with STRICT_CONFIG', async () => {
    env = { ...env, DATABSE_URL: 'postgres://gateway@db.internal/gateway' };
    const listed = await run('keys', 'list');
    expect(listed.code).toBe(0);
    expect(listed.err[0]).toBe(
      'msv3-gateway: warning: DATABSE_URL is not a setting (did you mean DATABASE_URL?); it is ignored.',
    );
    env = { ...env, STRICT_CONFIG: 'true' };
    const strict = await run('migrate');
    expect(strict.code).toBe(1);
    expect(strict.err).toEqual([
      'msv3-gateway: configuration error: DATABSE_URL is not a setting (did you mean DATABASE_URL?): rename or remove it (STRICT_CONFIG refuses variables that look like misspelt settings)',
    ]);
  });

  it('migrates, then reports an up-to-date database', async () => {
    expect(await run('migrate')).toMatchObject({
      code: 0,
      out: [`Applied: ${Object.keys(MIGRATIONS).join(', ')}`],
    });
    expect(await run('migrate')).toMatchObject({ code: 0, out: ['Database is up to date.'] });
  });

  it('prints help listing every command and setting', async () => {
    const { code, out } = await run('--help');
    expect(code).toBe(0);
    const text = out.join('\n');
    for (const command of [
      'serve',
      'migrate',
      'keys create',
      'keys list',
      'keys revoke',
      'listen (--forward-to URL | --print)',
    ])
      expect(text).toContain(command);
    expect(text).toContain('RATE_LIMIT_LIVE_POINTS=100');
  });
});

interface LogRecord {
  level: number;
  msg: string;
  startup?: string;
}

/** The JSON log lines among a process's standard output. */
function logRecords(stdout: string): LogRecord[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogRecord);
}

describe('msv3-gateway as a process', () => {
  const cli = join(process.cwd(), 'src', 'cli.ts');

  function spawnCli(args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []) {
    const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', cli, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, stderr: () => stderr, stdout: () => stdout };
  }

  const waitFor = (read: () => string, pattern: RegExp, timeoutMs = 80_000) =>
    until(
      () => `${pattern}; got:\n${read()}`,
      () => read().match(pattern) ?? undefined,
      timeoutMs,
      50,
    );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'serves until %s, then exits 0',
    async (signal) => {
      const env = {
        PORT: '0',
        DATABASE_URL: `sqlite:${join(folder, `process-${signal}`, 'gateway.db')}`,
        LOG_LEVEL: 'info',
      };
      const proc = spawnCli(['serve'], env);
      try {
        const [, url] = await waitFor(proc.stderr, /listening on (http:\/\/\S+)/);
        const [key] = await waitFor(proc.stdout, /pk_test_[0-9A-Za-z]{36}/);
        // The first key is printed on stdout as plain lines: never on stderr, never in a JSON log record.
        expect(proc.stderr()).not.toContain(key);
        expect(
          proc
            .stdout()
            .split('\n')
            .filter((line) => line.includes(key!) && line.startsWith('{')),
        ).toEqual([]);
        const response = await fetch(`${url}/v1/wholesalers`, { headers: { 'x-api-key': key! } });
        expect(response.status).toBe(200);
        proc.child.kill(signal);
        expect(await proc.exited).toBe(0);
        expect(proc.stdout()).toContain(`"signal":"${signal}"`);
        expect(proc.stdout()).toContain('"msg":"stopped"');
        // The defaults fit any heap limit: no memory warning.
        expect(proc.stdout()).not.toContain('UPSTREAM_MAX_CONCURRENCY + UPSTREAM_MAX_QUEUE');
      } finally {
        if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
      }
    },
    120_000,
  );

  it('stops gracefully, exit 0, for a signal that comes while it is still starting', async () => {
    const env = {
      PORT: '0',
      DATABASE_URL: `sqlite:${join(folder, 'early-signal', 'gateway.db')}`,
      // Warned about just after the signals are caught and before start-up: the moment to send one.
      DATABSE_URL: 'postgres://gateway@db.internal/gateway',
      LOG_LEVEL: 'info',
    };
    const proc = spawnCli(['serve'], env);
    try {
      await waitFor(proc.stdout, /DATABSE_URL is not a setting/);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
      const messages = logRecords(proc.stdout()).map((record) => record.msg);
      // Caught during start-up (Node's default would have ended it at once with no exit code), then the
      // started gateway is stopped as for any signal.
      expect(messages).toContain('signal during start-up; stopping once started');
      const listening = messages.findIndex((msg) => msg.startsWith('listening on http://'));
      expect(listening).toBeGreaterThan(messages.indexOf('signal during start-up; stopping once started'));
      expect(messages.indexOf('shutting down')).toBeGreaterThan(listening);
      expect(messages.at(-1)).toBe('stopped');
    } finally {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    }
  }, 120_000);

  it('logs what it runs on, warns about a misspelt variable, and says there is no key and how to make one', async () => {
    const env = {
      PORT: '0',
      DATABASE_URL: `sqlite:${join(folder, 'summary', 'gateway.db')}`,
      DATABSE_URL: 'postgres://gateway:pw@db.internal/gateway',
      CREATE_FIRST_KEY: 'false',
      LOG_LEVEL: 'info',
    };
    const proc = spawnCli(['serve'], env);
    try {
      await waitFor(proc.stderr, /listening on http:\/\/\S+/);
      // The log lines come before the printed ones, but through another pipe.
      await waitFor(proc.stdout, /"startup":"api keys"/);
      expect(proc.stderr()).toContain(
        'No usable API key in the database: every request is refused with 401 api_key_invalid. Make one: msv3-gateway keys create --name NAME --mode test|live',
      );
      const records = logRecords(proc.stdout());
      expect(records.find((r) => r.msg.startsWith('DATABSE_URL'))).toMatchObject({
        level: 40,
        msg: 'DATABSE_URL is not a setting (did you mean DATABASE_URL?); it is ignored',
      });
      expect(records.filter((r) => r.startup !== undefined).map((r) => r.startup)).toEqual([
        'database',
        'rate limits',
        'redis',
        'workers',
        'tracing',
        'private endpoints',
        'sandbox',
        'listening',
        'api keys',
      ]);
      expect(proc.stdout()).toContain(
        `"msg":"database: SQLite file ${join(folder, 'summary', 'gateway.db')}"`,
      );
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    } finally {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    }
  }, 120_000);

  it('warns at start when the wholesaler calls it may hold outgrow its heap limit', async () => {
    // 128 MB of old space (V8's limit: 176 MB with the default semi-spaces) holds about 5,400 calls.
    const env = {
      PORT: '0',
      DATABASE_URL: `sqlite:${join(folder, 'heap-budget', 'gateway.db')}`,
      UPSTREAM_MAX_CONCURRENCY: '8000',
      UPSTREAM_MAX_QUEUE: '2000',
      LOG_LEVEL: 'info',
    };
    const proc = spawnCli(['serve'], env, ['--max-old-space-size=128']);
    try {
      await waitFor(proc.stderr, /listening on http:\/\/\S+/);
      // The log line goes to stdout, another pipe: it may arrive after the stderr line.
      await waitFor(proc.stdout, /UPSTREAM_MAX_CONCURRENCY \+ UPSTREAM_MAX_QUEUE/);
      const record = logRecords(proc.stdout()).find((entry) =>
        entry.msg.startsWith('UPSTREAM_MAX_CONCURRENCY + UPSTREAM_MAX_QUEUE'),
      );
      expect(record?.level).toBe(40);
      expect(record?.msg).toMatch(/let 10000 calls be in flight .* heap limit \(\d+ MB\) holds about \d+/);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    } finally {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    }
  }, 120_000);

  it('exits 1 naming REDIS_URL (without its password) and the cause when Redis is not reachable at start', async () => {
    const port = await closedLoopbackPort();
    const proc = spawnCli(['serve'], {
      PORT: '0',
      DATABASE_URL: `sqlite:${join(folder, 'redis-down', 'gateway.db')}`,
      REDIS_URL: `redis://gateway:s3cret-pw@127.0.0.1:${port}`,
      LOG_LEVEL: 'silent',
    });
    // Bounded: a start that hangs (a client reconnecting forever) is killed and fails the test. The
    // bound is generous because loading the sources through tsx alone takes seconds on a busy machine.
    const killer = setTimeout(() => proc.child.kill('SIGKILL'), 50_000);
    const code = await proc.exited;
    clearTimeout(killer);
    const stderr = proc.stderr();
    expect(code).toBe(1);
    expect(stderr).toContain(
      `msv3-gateway: REDIS_URL redis://gateway@127.0.0.1:${port}: Redis is not reachable (connect ECONNREFUSED 127.0.0.1:${port})`,
    );
    expect(stderr).not.toContain('s3cret-pw');
  }, 60_000);

  it('exits 1 with the variable named when the configuration is bad', async () => {
    const proc = spawnCli(['serve'], { PORT: '-5' });
    expect(await proc.exited).toBe(1);
    expect(proc.stderr()).toContain('configuration error: PORT must be >= 0');
  }, 90_000);

  it('names PORT when the port is taken, and exits 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const proc = spawnCli(['serve'], {
        PORT: String(port),
        DATABASE_URL: `sqlite:${join(folder, 'taken', 'gateway.db')}`,
        LOG_LEVEL: 'silent',
      });
      expect(await proc.exited).toBe(1);
      expect(proc.stderr()).toContain(`127.0.0.1:${port} is already in use (EADDRINUSE); set PORT`);
    } finally {
      taken.close();
    }
  }, 90_000);
});
