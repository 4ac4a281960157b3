/**
 * Gateway overhead benchmark (not part of `npm test`): `npm run bench:gateway`.
 *
 * `POST /v1/availability` with 50 items, loaded with wrk (`-t1 -c32`, µs resolution), against two
 * servers that call the same canned SOAP upstream (bench/gateway/upstream.ts: node:http on 127.0.0.1 in
 * its own process, the fixed 50-article v2 answer of bench/codec/envelopes.ts):
 *  - the gateway, built (`dist/`) and started as its own process the way `npm start` starts it (`node`
 *    with the V8 flags of package.json's start script, `dist/cli.js serve`): the embedded SQLite store, a catalogue whose wholesaler `bench` has the
 *    canned upstream as its live server, a live API key made with `keys create`, generous rate limits
 *    (the in-memory limiter still counts every request), LOG_LEVEL=info (the default: one JSON line per
 *    request, as in production; stdout goes to /dev/null), everything else at its defaults;
 *  - the pass-through baseline (bench/gateway/baseline.ts): Fastify validating the same body schema,
 *    forwarding a fixed SOAP body with undici, answering a fixed JSON (the gateway's own answer);
 *  - a decode-only reference (the same baseline, plus our typed decode of the SOAP answer): how close
 *    any gateway that reads the wholesaler's answer can come to the baseline on this machine.
 * Both get the identical request (same headers and body). Warm-up 5 s each, then BENCH_RUNS (3) runs of
 * BENCH_SECONDS (10) s each, the servers alternating (G B F, F B G, G B F); medians are reported.
 * Also recorded: server CPU time per request (/proc), the 1-minute load average at each run's start.
 * Targets (issue 4): gateway ≥ 80 % of the baseline's req/s, and at most +1 ms p50, at 32 connections.
 * Two settings change the scenario (the targets are defined for the defaults):
 *  - BENCH_UPSTREAM_DELAY_MS=<ms> (0 by default, at most 1000): the upstream waits that long before each
 *    answer, as a wholesaler's own processing would, so the servers are no longer CPU-bound;
 *  - BENCH_CONNECTIONS=<n> (32 by default, 1 to 256): wrk's connections; 1 shows what one call pays.
 * Such a run writes bench/results/gateway[-upstream-<ms>ms][-c<n>].json instead.
 * BENCH_CPU_PROF=<dir> starts the gateway with `--cpu-prof` (the profile is written when it stops).
 * Everything stays on 127.0.0.1 and stops by itself. Writes bench/results/gateway.json.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { va50Articles } from '../codec/envelopes.js';

const ROOT = process.cwd();
const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const UPSTREAM_DELAY_MS = boundedSetting('BENCH_UPSTREAM_DELAY_MS', 0, 0, 1000);
const CONNECTIONS = boundedSetting('BENCH_CONNECTIONS', 32, 1, 256);
const SCENARIO = `${UPSTREAM_DELAY_MS === 0 ? '' : `-upstream-${UPSTREAM_DELAY_MS}ms`}${CONNECTIONS === 32 ? '' : `-c${CONNECTIONS}`}`;
const RESULTS = join(ROOT, 'bench', 'results', `gateway${SCENARIO}.json`);
const CLI = join(ROOT, 'dist', 'cli.js');
const START_NODE_FLAGS = startScriptNodeFlags();
const RUNS = Math.min(Number(process.env.BENCH_RUNS ?? 3), 9);
const SECONDS = Math.min(Number(process.env.BENCH_SECONDS ?? 10), 60);
const WARMUP_SECONDS = 5;
const UPSTREAM_CONNECTIONS = 16; // the gateway's default UPSTREAM_MAX_CONCURRENCY
const LOG_LEVEL = 'info';
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
/** The whole benchmark stops itself after this, whatever happens. */
const WATCHDOG_MS = 15 * 60_000;

type Target = 'gateway' | 'baseline' | 'floor';
const TARGETS: readonly Target[] = ['gateway', 'baseline', 'floor'];

interface WrkResult {
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

interface RunResult {
  load_average: number;
  requests_per_second: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  mean_us: number;
  /** CPU time (user + system) of the server process per request, µs; null without /proc. */
  server_cpu_us_per_request: number | null;
}

const children: ChildProcess[] = [];

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  checkWrk();
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-gateway-'));
  const watchdog = setTimeout(() => {
    console.error(`[bench] watchdog: still running after ${WATCHDOG_MS / 60_000} min; stopping`);
    stopAll();
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  try {
    const upstream = await forkChild('upstream', [String(UPSTREAM_DELAY_MS)]);
    const upstreamBase = `http://127.0.0.1:${upstream.port}/msv3/v2.0`;
    const gateway = await startGateway(folder, upstreamBase);
    const upstreamArgs = [`${upstreamBase}/verfuegbarkeitAnfragen`, String(UPSTREAM_CONNECTIONS)];
    const baseline = await forkChild('baseline', upstreamArgs);
    const floor = await forkChild('baseline', [...upstreamArgs, 'decode']);
    const baseUrls: Record<Target, string> = {
      gateway: gateway.url,
      baseline: `http://127.0.0.1:${baseline.port}`,
      floor: `http://127.0.0.1:${floor.port}`,
    };
    const pids: Record<Target, number> = {
      gateway: gateway.child.pid!,
      baseline: baseline.child.pid!,
      floor: floor.child.pid!,
    };

    const body = JSON.stringify({
      wholesaler: 'bench',
      items: va50Articles().map((article, i) => ({
        pzn: article.pzn.padStart(8, '0'),
        quantity: article.quantity,
        demand_type: ['direct', 'unspecified', 'one_of_many'][i % 3],
      })),
    });
    const headers = {
      'content-type': 'application/json',
      'x-api-key': gateway.key,
      'x-msv3-username': 'bench1',
      'x-msv3-password': 'geheim',
    };

    // Correctness first: the gateway maps all 50 articles; the baseline answers the same bytes.
    const answer = await post(`${baseUrls.gateway}/v1/availability`, headers, body);
    const parsed = JSON.parse(answer) as { items: unknown[] };
    if (parsed.items.length !== 50) throw new Error(`the gateway answered ${parsed.items.length} items`);
    for (const [name, reference] of [
      ['baseline', baseline],
      ['floor', floor],
    ] as const) {
      reference.child.send({ answer });
      await reference.when('answerSet');
      if ((await post(`${baseUrls[name]}/v1/availability`, headers, body)) !== answer)
        throw new Error(`the ${name} server does not answer the fixed JSON`);
    }

    const scripts = Object.fromEntries(
      TARGETS.map((t) => [t, writeWrkScript(folder, t, headers, body)]),
    ) as Record<Target, string>;
    const wrkFor = (target: Target, seconds: number) =>
      wrk(`${baseUrls[target]}/v1/availability`, scripts[target], seconds);

    console.log(`[bench] warm-up: ${WARMUP_SECONDS} s each`);
    for (const target of TARGETS) await wrkFor(target, WARMUP_SECONDS);

    const runs: Record<Target, RunResult[]> = { gateway: [], baseline: [], floor: [] };
    for (let run = 1; run <= RUNS; run++) {
      const order = run % 2 === 1 ? TARGETS : [...TARGETS].reverse();
      for (const target of order) {
        await sleep(500);
        const load = Math.round(loadavg()[0]! * 100) / 100;
        const cpuBefore = processCpuUs(pids[target]);
        const result = await wrkFor(target, SECONDS);
        const cpuAfter = processCpuUs(pids[target]);
        const errors =
          result.errors_connect +
          result.errors_read +
          result.errors_write +
          result.errors_status +
          result.errors_timeout;
        if (errors > 0)
          throw new Error(`${target} run ${run}: wrk reported errors ${JSON.stringify(result)}`);
        const rps = result.requests / (result.duration_us / 1e6);
        const row: RunResult = {
          load_average: load,
          requests_per_second: Math.round(rps),
          p50_us: result.p50_us,
          p90_us: result.p90_us,
          p99_us: result.p99_us,
          mean_us: Math.round(result.mean_us),
          server_cpu_us_per_request:
            cpuBefore === null || cpuAfter === null
              ? null
              : Math.round((cpuAfter - cpuBefore) / result.requests),
        };
        runs[target].push(row);
        console.log(`[bench] run ${run} ${target.padEnd(8)} ${JSON.stringify(row)}`);
      }
    }

    upstream.child.send({ report: true });
    const { requests: upstreamRequests } = await upstream.when('requests');
    const median = {
      gateway: medians(runs.gateway),
      baseline: medians(runs.baseline),
      floor: medians(runs.floor),
    };
    const ratios = {
      throughput_gateway_over_baseline: round(
        median.gateway.requests_per_second / median.baseline.requests_per_second,
        3,
      ),
      throughput_floor_over_baseline: round(
        median.floor.requests_per_second / median.baseline.requests_per_second,
        3,
      ),
      throughput_gateway_over_floor: round(
        median.gateway.requests_per_second / median.floor.requests_per_second,
        3,
      ),
      p50_added_us: median.gateway.p50_us - median.baseline.p50_us,
      p99_added_us: median.gateway.p99_us - median.baseline.p99_us,
    };
    const targets = {
      /** Issue 4 defines them for the default scenario (upstream at once, 32 connections). */
      apply_to_this_scenario: SCENARIO === '',
      throughput_at_least_80_percent: ratios.throughput_gateway_over_baseline >= 0.8,
      p50_added_at_most_1_ms: ratios.p50_added_us <= 1000,
    };
    const output = {
      benchmark: 'gateway overhead: POST /v1/availability, 50 items (bench/gateway/run.ts)',
      command: [
        UPSTREAM_DELAY_MS === 0 ? '' : `BENCH_UPSTREAM_DELAY_MS=${UPSTREAM_DELAY_MS} `,
        CONNECTIONS === 32 ? '' : `BENCH_CONNECTIONS=${CONNECTIONS} `,
        'npm run bench:gateway',
      ].join(''),
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, wrk: wrkVersion() },
      setup: {
        load: `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, ${RUNS} runs after a ${WARMUP_SECONDS} s warm-up each, servers alternating, medians`,
        request: `${Buffer.byteLength(body)} B JSON, 50 items (the PZNs of the canned answer)`,
        response: `${Buffer.byteLength(answer)} B JSON (the gateway's answer; the baseline sends the same bytes)`,
        upstream: `node:http on 127.0.0.1 in its own process, ${upstream.bytes} B canned v2 verfuegbarkeitAnfragen answer, ${UPSTREAM_DELAY_MS === 0 ? 'at once' : `after ${UPSTREAM_DELAY_MS} ms`}`,
        gateway: `node ${[...START_NODE_FLAGS, ''].join(' ')}dist/cli.js serve (as npm start), own process; SQLite; catalogue wholesaler "bench" live → canned upstream; live key; LOG_LEVEL=${LOG_LEVEL} to /dev/null; RATE_LIMIT_LIVE_POINTS=1000000 (memory limiter); defaults otherwise (UPSTREAM_MAX_CONCURRENCY ${UPSTREAM_CONNECTIONS})`,
        baseline: `Fastify 5 (logger off) validating the same body schema (Ajv), undici Pool (${UPSTREAM_CONNECTIONS} connections) POSTing a fixed SOAP body, fixed JSON answer`,
        floor:
          'the baseline plus verfuegbarkeitAnfragen.decodeResponse of the SOAP answer (decode-only reference; same fixed JSON answer)',
        cpu_profile: CPU_PROF_DIR ?? null,
      },
      upstream_requests: upstreamRequests,
      median,
      ratios,
      targets,
      runs,
    };
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(RESULTS, `${JSON.stringify(output, null, 2)}\n`);
    printTable(median, ratios, targets, runs);
    console.log(`[bench] wrote ${RESULTS}`);

    await stopGateway(gateway.child);
    baseline.child.send({ stop: true });
    floor.child.send({ stop: true });
    upstream.child.send({ stop: true });
  } finally {
    clearTimeout(watchdog);
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

interface Forked {
  child: ChildProcess;
  port: number;
  bytes?: number;
  when(key: string): Promise<Record<string, unknown>>;
}

async function forkChild(name: 'upstream' | 'baseline', args: string[]): Promise<Forked> {
  const child = fork(join(HERE, `${name}${EXT}`), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  const when = (key: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name}: no "${key}" within 30 s`)), 30_000);
      const onMessage = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
    });
  const ready = await when('ready');
  return { child, port: ready.port as number, bytes: ready.bytes as number | undefined, when };
}

async function startGateway(
  folder: string,
  upstreamBase: string,
): Promise<{ child: ChildProcess; url: string; key: string }> {
  const catalogue = join(folder, 'catalogue.json');
  writeFileSync(
    catalogue,
    JSON.stringify({
      wholesalers: [{ id: 'bench', name: 'Canned upstream', version: 2, live: { baseUrl: upstreamBase } }],
    }),
  );
  // A clean environment: only what the benchmark sets (no REDIS_URL, CONFIG_FILE, … from the shell).
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: `sqlite:${join(folder, 'gateway.db')}`,
    WHOLESALER_CATALOGUE: catalogue,
    LOG_LEVEL,
    RATE_LIMIT_LIVE_POINTS: '1000000',
    RATE_LIMIT_TEST_POINTS: '1000000',
  };
  const created = execFileSync(
    process.execPath,
    [CLI, 'keys', 'create', '--name', 'bench', '--mode', 'live', '--json'],
    { env, encoding: 'utf8' },
  );
  const key = (JSON.parse(created) as { key: string }).key;
  const profile = CPU_PROF_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`];
  const child = spawn(process.execPath, [...START_NODE_FLAGS, ...profile, CLI, 'serve'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${text}`)), 30_000);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      text += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${text}`)));
  });
  return { child, url, key };
}

function boundedSetting(name: string, fallback: number, min: number, max: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}

/** The node flags of `npm start` (`node <flags> dist/cli.js serve`), so the benchmark runs what it runs. */
function startScriptNodeFlags(): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const match = /^node((?: --[\w-]+(?:=\S+)?)*) dist\/cli\.js serve$/.exec(scripts.start ?? '');
  if (match === null)
    throw new Error(`package.json's start script is not "node [flags] dist/cli.js serve": ${scripts.start}`);
  return match[1]!.split(' ').filter(Boolean);
}

async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
}

function stopAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
}

async function post(url: string, headers: Record<string, string>, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`);
  return text;
}

function writeWrkScript(folder: string, name: string, headers: Record<string, string>, body: string): string {
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

async function wrk(url: string, script: string, seconds: number): Promise<WrkResult> {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '5s', '-s', script, url];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
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

function checkWrk(): void {
  if (wrkVersion() === null)
    throw new Error('wrk is not installed (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk)');
}

function wrkVersion(): string | null {
  try {
    execFileSync('wrk', ['--version'], { encoding: 'utf8', stdio: 'pipe' });
    return null; // unreachable: wrk --version exits 1
  } catch (error) {
    const out = (error as { stdout?: string; code?: string }).stdout;
    if ((error as { code?: string }).code === 'ENOENT') return null;
    return out?.split('\n')[0]?.trim() ?? 'wrk';
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process in µs, from /proc (Linux); null elsewhere. */
function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is [0], utime is field 14 overall → [11], stime → [12].
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
  } catch {
    return null;
  }
}

function medians(runs: RunResult[]): RunResult {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const keys = Object.keys(runs[0]!) as (keyof RunResult)[];
  return Object.fromEntries(
    keys.map((k) => {
      const values = runs.map((r) => r[k]);
      return [k, values.some((v) => v === null) ? null : median(values as number[])];
    }),
  ) as unknown as RunResult;
}

function printTable(
  median: Record<Target, RunResult>,
  ratios: {
    throughput_gateway_over_baseline: number;
    throughput_floor_over_baseline: number;
    p50_added_us: number;
    p99_added_us: number;
  },
  targets: {
    apply_to_this_scenario: boolean;
    throughput_at_least_80_percent: boolean;
    p50_added_at_most_1_ms: boolean;
  },
  runs: Record<Target, RunResult[]>,
): void {
  const n = (v: number | null) => (v === null ? '-' : v.toLocaleString('en-US'));
  const rows = [
    ['', 'req/s', 'p50 µs', 'p99 µs', 'server CPU µs/req', 'req/s of each run'],
    ...(['baseline', 'floor', 'gateway'] as const).map((t) => [
      { baseline: 'pass-through baseline', floor: 'baseline + decode only', gateway: 'gateway' }[t],
      n(median[t].requests_per_second),
      n(median[t].p50_us),
      n(median[t].p99_us),
      n(median[t].server_cpu_us_per_request),
      runs[t].map((r) => n(r.requests_per_second)).join(' / '),
    ]),
    [
      'gateway vs baseline',
      `${(ratios.throughput_gateway_over_baseline * 100).toFixed(1)} %`,
      `${ratios.p50_added_us >= 0 ? '+' : ''}${n(ratios.p50_added_us)}`,
      `${ratios.p99_added_us >= 0 ? '+' : ''}${n(ratios.p99_added_us)}`,
      '',
      '',
    ],
    [
      'decode-only vs baseline',
      `${(ratios.throughput_floor_over_baseline * 100).toFixed(1)} %`,
      '',
      '',
      '',
      '',
    ],
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  console.log('');
  console.log(
    `POST /v1/availability, 50 items; upstream answers ${UPSTREAM_DELAY_MS === 0 ? 'at once' : `after ${UPSTREAM_DELAY_MS} ms`}; wrk -t1 -c${CONNECTIONS} -d${SECONDS}s; medians of ${RUNS} runs; load average ${runs.gateway.map((r) => r.load_average).join(' / ')} (gateway runs)`,
  );
  for (const row of rows)
    console.log(
      row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
    );
  console.log(
    `targets${targets.apply_to_this_scenario ? '' : ' (issue 4 defines them for the default scenario: upstream at once, 32 connections)'}: throughput ≥ 80 % of baseline: ${targets.throughput_at_least_80_percent ? 'met' : 'NOT met'}; p50 added ≤ 1,000 µs: ${targets.p50_added_at_most_1_ms ? 'met' : 'NOT met'}`,
  );
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopAll();
    process.exit(130);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  stopAll();
  process.exitCode = 1;
});
