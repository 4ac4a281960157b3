/**
 * Load with wrk (bench/gateway, bench/workers): one POST repeated by `-c` connections for `-d` seconds,
 * its figures written by the Lua script as one `WRK_RESULT {json}` line.
 */
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { track } from './processes.js';

export interface WrkResult {
  requests: number;
  duration_us: number;
  errors_connect: number;
  errors_read: number;
  errors_write: number;
  errors_status: number;
  errors_timeout: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  mean_us: number;
  max_us: number;
}

/** A wrk Lua script that POSTs `body` with `headers` and prints the figures; returns its path. */
export function writeWrkScript(
  folder: string,
  name: string,
  headers: Record<string, string>,
  body: string,
): string {
  const lua = (text: string) => `[==[${text}]==]`;
  const file = join(folder, `${name}.lua`);
  writeFileSync(
    file,
    [
      'wrk.method = "POST"',
      `wrk.body = ${lua(body)}`,
      ...Object.entries(headers).map(([name, value]) => `wrk.headers[ ${lua(name)} ] = ${lua(value)}`),
      'done = function(summary, latency, requests)',
      '  local e = summary.errors',
      '  io.write(string.format(\'WRK_RESULT {"requests":%d,"duration_us":%d,"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\\n\',',
      '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,',
      '    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))',
      'end',
      '',
    ].join('\n'),
  );
  return file;
}

export async function wrk(
  url: string,
  script: string,
  seconds: number,
  connections: number,
): Promise<WrkResult> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', script, url];
  // BENCH_WRK_CPUS=<list>: wrk runs on those cores only (taskset), away from the server's.
  const pinned = process.env.BENCH_WRK_CPUS;
  const output = await new Promise<string>((resolve, reject) => {
    const child = track(
      pinned === undefined
        ? spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] })
        : spawn('taskset', ['-c', pinned, 'wrk', ...args], { stdio: ['ignore', 'pipe', 'inherit'] }),
    );
    let text = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      text += chunk;
    });
    const timer = setTimeout(() => child.kill(), (seconds + 30) * 1000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(text);
      else reject(new Error(`wrk exited with ${code}:\n${text}`));
    });
  });
  const line = output.split('\n').find((l) => l.startsWith('WRK_RESULT '));
  if (line === undefined) throw new Error(`no WRK_RESULT in wrk output:\n${output}`);
  return JSON.parse(line.slice('WRK_RESULT '.length)) as WrkResult;
}

export function checkWrk(): void {
  if (wrkVersion() === null)
    throw new Error('wrk is not installed (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk)');
}

/** wrk's version line, or null when wrk is missing. */
export function wrkVersion(): string | null {
  try {
    execFileSync('wrk', ['--version'], { encoding: 'utf8', stdio: 'pipe' });
    return null; // unreachable: wrk --version exits 1
  } catch (error) {
    const out = (error as { stdout?: string; code?: string }).stdout;
    if ((error as { code?: string }).code === 'ENOENT') return null;
    return out?.split('\n')[0]?.trim() ?? 'wrk';
  }
}
