/**
 * Child processes of the benchmarks (bench/gateway, bench/workers, bench/overload): every process started
 * through here is tracked, so `stopAll` ends them whatever happens; a gateway is started as `npm start`
 * starts it and is ready once it prints its URL. Everything stays on 127.0.0.1.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = process.cwd();
export const CLI = join(ROOT, 'dist', 'cli.js');

const children: ChildProcess[] = [];

/** Keeps `child` for `stopAll`; returns it. */
export function track<T extends ChildProcess>(child: T): T {
  children.push(child);
  return child;
}

export function stopAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
}

/**
 * Stops every process started here and exits with 1 if the benchmark still runs after `ms`, whatever it
 * waits for; call the returned function when it is done.
 */
export function startWatchdog(ms: number): () => void {
  const watchdog = setTimeout(() => {
    console.error(`[bench] watchdog: still running after ${Math.round(ms / 1000)} s; stopping`);
    stopAll();
    process.exit(1);
  }, ms);
  watchdog.unref();
  return () => clearTimeout(watchdog);
}

/** SIGTERM, then waits for the exit (at most 20 s: the gateway's drain is 10 s). */
export async function stopAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
}

/**
 * The node flags of a start script of package.json (`node <flags> dist/cli.js serve`): `start` (what
 * `npm start` runs) by default, so a benchmark runs what operators run.
 */
export function startScriptNodeFlags(script = 'start'): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const match = /^node((?: --[\w-]+(?:=\S+)?)*) dist\/cli\.js serve$/.exec(scripts[script] ?? '');
  if (match === null)
    throw new Error(
      `package.json's ${script} script is not "node [flags] dist/cli.js serve": ${scripts[script]}`,
    );
  return match[1]!.split(' ').filter(Boolean);
}

/** The URL a gateway prints on standard error once it listens (`child` spawned with stderr piped). */
export function untilListening(child: ChildProcess, name: string, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${text}`)), timeoutMs);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      text += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${text}`)));
  });
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * Voluntary context switches of all a process's threads so far, from /proc (Linux); null elsewhere or once
 * it has gone. A thread switches voluntarily when it waits: its event loop for the next event, a pool
 * thread for work, or a thread for another's answer. Work handed between threads shows here and in CPU
 * time, not in the main thread's instructions (docs/performance.md "Log lines written synchronously").
 */
export function processVoluntarySwitches(pid: number): number | null {
  try {
    let switches = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
      const match = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status);
      if (match !== null) switches += Number(match[1]);
    }
    return switches;
  } catch {
    return null;
  }
}

/** utime + stime of a process in µs, from /proc (Linux); null elsewhere or once it has gone. */
export function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is [0], utime is field 14 overall → [11], stime → [12].
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
  } catch {
    return null;
  }
}
