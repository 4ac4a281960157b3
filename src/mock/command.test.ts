import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../../test/until.js';
import { runCli } from '../cli.js';
import { createMsv3Client } from '../msv3/client.js';
import { createCredentials } from '../msv3/credentials.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { createTransport } from '../msv3/transport.js';
import { runMockCommand } from './command.js';

const SETTINGS = { nightOrderDelayMs: 10_000, slowAnswerMs: 2_000, lateAnswerMs: 35_000 };

function captureIo() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (line: string) => out.push(line), stderr: (line: string) => err.push(line) };
}

async function connectionTest(baseUrl: string, username: string, password: string, version: 1 | 2 = 2) {
  const transport = createTransport({ totalTimeoutMs: 5_000 });
  try {
    const client = createMsv3Client(transport);
    return await client.call(
      verbindungTesten,
      { target: 'cli', baseUrl, version },
      createCredentials(username, password),
      { clientSoftwareId: 'cli-test' },
    );
  } finally {
    await transport.close();
  }
}

/** Runs the command until `stop` is called; `ready` resolves with its output once it listens. */
function runUntilStopped(args: Record<string, string>) {
  const io = captureIo();
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const exit = runMockCommand(args, io, SETTINGS, () => stopped);
  return { io, stop, exit };
}

function waitForOutput(io: { out: string[] }, pattern: RegExp): Promise<RegExpMatchArray> {
  return until(`${pattern} in the output`, () => io.out.join('\n').match(pattern) ?? undefined, 2_000, 10);
}

describe('msv3-gateway mock', () => {
  it('prints its base URLs and the scenario list, logs requests and stops on request', async () => {
    const run = runUntilStopped({ port: '0' });
    const [, v2] = await waitForOutput(run.io, /v2: (http:\/\/127\.0\.0\.1:\d+\/msv3\/v2\.0)/);
    const output = run.io.out.join('\n');
    expect(output).toMatch(/v1: http:\/\/127\.0\.0\.1:\d+\/msv3\/v1\.0/);
    expect(output).toContain('09990240  CONNECTION_DROP');
    expect(output).toContain('wrong-password');
    expect(output).toContain('nobulk');
    expect((await connectionTest(v2!, 'apotheke1', 'x')).ok).toBe(true);
    run.stop();
    expect(await run.exit).toBe(0);
    expect(run.io.err[0]).toMatch(/^POST \/msv3\/v2\.0\/verbindungTesten verbindungTesten v2 → 200/);
    expect(run.io.err.at(-1)).toBe('msv3-gateway mock: stopped');
  });

  it('--version 1 and fixed --username/--password restrict the server', async () => {
    const run = runUntilStopped({ port: '0', version: '1', username: 'NL01\\apo4711', password: 'geheim' });
    const [, v1] = await waitForOutput(run.io, /v1: (http:\/\/\S+)/);
    try {
      expect(run.io.out.join('\n')).not.toMatch(/v2: /);
      expect((await connectionTest(v1!, 'NL01\\apo4711', 'geheim', 1)).ok).toBe(true);
      const wrong = await connectionTest(v1!, 'NL01\\apo4711', 'anders', 1);
      expect(!wrong.ok && wrong.error.reason).toBe('credentials_rejected');
      const v2 = await connectionTest(v1!.replace('v1.0', 'v2.0'), 'NL01\\apo4711', 'geheim', 2);
      expect(!v2.ok && v2.error).toMatchObject({ reason: 'soap_fault', fault: { soapCode: 'Sender' } });
    } finally {
      run.stop();
      await run.exit;
    }
  });

  it.each([
    [{ version: '3' }, '--version must be 1 or 2'],
    [{ port: 'x' }, '--port must be 0..65535'],
    [{ username: 'apo' }, '--username and --password go together'],
    [{ 'night-hours': '25-6' }, '--night-hours'],
  ])('refuses %o with a usage error', async (args, message) => {
    const io = captureIo();
    expect(await runMockCommand(args, io, SETTINGS, () => Promise.resolve())).toBe(2);
    expect(io.err[0]).toContain(message);
    expect(io.err[1]).toMatch(/^Usage: msv3-gateway mock/);
  });

  it('is listed in the CLI help and has its own --help', async () => {
    const io = { env: {}, ...captureIo() };
    expect(await runCli(['mock', '--help'], io)).toBe(0);
    expect(io.out[0]).toMatch(/^Usage: msv3-gateway mock \[--port 8081\]/);
    expect(await runCli(['mock', '--colour'], io)).toBe(2);
  });

  it('runs as a process and exits 0 on SIGTERM', async () => {
    const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
    const child = spawn(tsx, [join(process.cwd(), 'src', 'cli.ts'), 'mock', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const match = await until(
        'the printed URL',
        () => stdout.match(/v2: (http:\/\/\S+)/) ?? undefined,
        20_000,
        50,
      );
      expect(match[1]).toBeDefined();
      expect((await connectionTest(match![1]!, 'apotheke1', 'x')).ok).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
