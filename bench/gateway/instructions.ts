/**
 * Instructions per request (`npm run bench:gateway -- --instructions`): the servers of the gateway
 * benchmark (gateway as `npm start` runs it, pass-through baseline, decode-only reference), each in its
 * own process under valgrind's callgrind, which counts the instructions the process executes in user
 * space. A count does not depend on the machine's speed or load, so a change of a few per cent shows in
 * one run, where CPU time on a VM swings by a quarter between runs.
 *
 * For each server: WARMUP requests with the instrumentation off (JIT tiers come up), then it is switched
 * on (`callgrind_control -i on`), the counters zeroed, REQUESTS requests sent (CONCURRENCY in flight,
 * from this process over loopback), and the counters dumped; instructions per request are the dump's
 * total ÷ REQUESTS. Not counted: the kernel (socket reads and writes, a third of the baseline's CPU time
 * under wrk) and the load generator. Valgrind runs one thread at a time, so V8's helper threads
 * (concurrent compilation and marking) count too, as they would in CPU time.
 * Writes bench/results/gateway-instructions.json. Everything stays on 127.0.0.1 and stops by itself.
 */
import { type ChildProcess, execFile, execFileSync, fork, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { va50Articles } from '../codec/envelopes.js';
import { expectEveryArticleAsked } from '../common/availability-answer.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import { CLI, stopAll, stopGateway, track, untilListening } from '../common/processes.js';
import { boundedSetting, forkChild, LOG_LEVEL, START_NODE_FLAGS, UPSTREAM_CONNECTIONS } from './harness.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const RESULTS = join(process.cwd(), 'bench', 'results', 'gateway-instructions.json');
const WARMUP = boundedSetting('INSTRUCTIONS_WARMUP', 3_000, 100, 100_000);
const REQUESTS = boundedSetting('INSTRUCTIONS_REQUESTS', 1_000, 50, 100_000);
const CONCURRENCY = boundedSetting('INSTRUCTIONS_CONCURRENCY', 8, 1, 64);
/** Where callgrind's files go, to read them with callgrind_annotate (a temporary folder by default). */
const DUMPS = process.env.INSTRUCTIONS_DUMPS;
/** Node flags for the three servers besides `npm start`'s (`--perf-basic-prof` names JIT code for callgrind's callers). */
const NODE_FLAGS = (process.env.INSTRUCTIONS_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const runAsync = promisify(execFile);

type Target = 'baseline' | 'floor' | 'gateway';

interface Counted {
  child: ChildProcess;
  /** The server's environment: callgrind_control finds it by names made from USER and HOST there. */
  env: NodeJS.ProcessEnv;
  url: string;
  headers: Record<string, string>;
}

export async function measureInstructions(): Promise<void> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is missing: apt-get install valgrind (it provides callgrind_control too)');
  }
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-instructions-'));
  const valgrind = (target: Target) => [
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${join(DUMPS ?? folder, `${target}.%p.out`)}`,
  ];
  try {
    const upstream = await forkChild('upstream', ['0']);
    const upstreamBase = `http://127.0.0.1:${upstream.port}/msv3/v2.0`;
    const body = JSON.stringify({
      wholesaler: 'bench',
      items: va50Articles().map((article, i) => ({
        pzn: article.pzn.padStart(8, '0'),
        quantity: article.quantity,
        demand_type: ['direct', 'unspecified', 'one_of_many'][i % 3],
      })),
    });
    const perRequest: Partial<Record<Target, number>> = {};
    // The gateway first: the baselines answer with its answer, so all send the same bytes.
    let answer = '';
    for (const target of ['gateway', 'baseline', 'floor'] as const) {
      const server =
        target === 'gateway'
          ? await startCountedGateway(folder, upstreamBase, valgrind(target))
          : await forkCountedBaseline(upstreamBase, target === 'floor', valgrind(target), answer);
      const pool = new Pool(new URL(server.url).origin, { connections: CONCURRENCY });
      const send = async () => {
        const response = await pool.request({
          path: '/v1/availability',
          method: 'POST',
          headers: { 'content-type': 'application/json', ...server.headers },
          body,
        });
        const text = await response.body.text();
        if (response.statusCode !== 200) throw new Error(`${target}: ${response.statusCode} ${text}`);
        return text;
      };
      if (target === 'gateway') {
        answer = await send();
        expectEveryArticleAsked(JSON.parse(answer), 'the gateway');
      } else if ((await send()) !== answer)
        throw new Error(`the ${target} server does not answer the fixed JSON`);
      const load = async (count: number) => {
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next++ < count) await send();
          }),
        );
      };
      const started = Date.now();
      await load(WARMUP);
      const pid = String(server.child.pid);
      const control = (command: string) => runAsync('callgrind_control', [command, pid], { env: server.env });
      await control('--instr=on');
      await control('--zero');
      await load(REQUESTS);
      await control('--dump');
      const total = await dumpedInstructions(DUMPS ?? folder, `${target}.${pid}`);
      perRequest[target] = Math.round(total / REQUESTS);
      console.log(
        `[instructions] ${target.padEnd(8)} ${(perRequest[target]! / 1e6).toFixed(3)} M per request (${((Date.now() - started) / 1000).toFixed(0)} s)`,
      );
      await pool.close();
      if (target === 'gateway') await stopGateway(server.child);
      else server.child.kill();
    }
    upstream.child.send({ stop: true });
    const ratio = (a: Target, b: Target) => Math.round((perRequest[a]! / perRequest[b]!) * 100) / 100;
    const output = {
      benchmark:
        'gateway instructions per request: POST /v1/availability, 50 items, callgrind (bench/gateway/instructions.ts)',
      command: 'npm run bench:gateway -- --instructions',
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
      setup: `each server alone under valgrind --tool=callgrind; ${WARMUP} warm-up requests uninstrumented, then ${REQUESTS} counted, ${CONCURRENCY} in flight; user-space instructions of the server process (all its threads)`,
      instructions_per_request: perRequest,
      ratio_gateway_over_baseline: ratio('gateway', 'baseline'),
      ratio_floor_over_baseline: ratio('floor', 'baseline'),
      ratio_gateway_over_floor: ratio('gateway', 'floor'),
    };
    writeFileSync(RESULTS, `${JSON.stringify(output, null, 2)}\n`);
    console.log(
      `instructions per request: gateway ${perRequest.gateway}, baseline ${perRequest.baseline}, decode-only ${perRequest.floor}; gateway ÷ baseline ${output.ratio_gateway_over_baseline}×, decode-only ÷ baseline ${output.ratio_floor_over_baseline}×`,
    );
    console.log(`[bench] wrote ${RESULTS}`);
  } finally {
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function startCountedGateway(
  folder: string,
  upstreamBase: string,
  valgrind: string[],
): Promise<Counted> {
  const env = benchGatewayEnv({
    folder,
    upstream: { baseUrl: upstreamBase, name: 'Canned upstream' },
    databaseFile: 'gateway.db',
    settings: { LOG_LEVEL, RATE_LIMIT_LIVE_POINTS: '1000000', RATE_LIMIT_TEST_POINTS: '1000000' },
  });
  const key = createLiveKey(env, 'bench');
  const child = track(
    spawn('valgrind', [...valgrind, process.execPath, ...START_NODE_FLAGS, ...NODE_FLAGS, CLI, 'serve'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  const url = await untilListening(child, 'gateway', 300_000);
  return {
    child,
    env,
    url,
    headers: { 'x-api-key': key, 'x-msv3-username': 'bench1', 'x-msv3-password': 'geheim' },
  };
}

async function forkCountedBaseline(
  upstreamBase: string,
  decode: boolean,
  valgrind: string[],
  answer: string,
): Promise<Counted> {
  const args = [
    `${upstreamBase}/verfuegbarkeitAnfragen`,
    String(UPSTREAM_CONNECTIONS),
    ...(decode ? ['decode'] : []),
  ];
  const child = track(
    fork(join(HERE, `baseline${EXT}`), args, {
      execPath: 'valgrind',
      execArgv: [...valgrind, process.execPath, ...NODE_FLAGS],
      stdio: ['ignore', 'inherit', 'ignore', 'ipc'],
    }),
  );
  const message = (key: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`baseline under valgrind: no "${key}"`)), 300_000);
      const on = (m: Record<string, unknown>) => {
        if (!(key in m)) return;
        clearTimeout(timer);
        child.off('message', on);
        resolve(m);
      };
      child.on('message', on);
    });
  const { port } = await message('ready');
  child.send({ answer });
  await message('answerSet');
  return { child, env: process.env, url: `http://127.0.0.1:${port}`, headers: {} };
}

/**
 * The total of the one dump callgrind wrote for `target` (its `totals:` line). The process writes it
 * when it next runs, which may be after `callgrind_control` has returned: waits up to 60 s for it.
 */
async function dumpedInstructions(folder: string, target: string): Promise<number> {
  for (let waited = 0; waited < 60_000; waited += 250) {
    const dumps = readdirSync(folder).filter((f) => f.startsWith(`${target}.`) && /\.out\.\d+$/.test(f));
    if (dumps.length > 1) throw new Error(`more than one callgrind dump for ${target}: ${dumps.join(', ')}`);
    const match =
      dumps.length === 0 ? null : /^totals: (\d+)/m.exec(readFileSync(join(folder, dumps[0]!), 'utf8'));
    if (match !== null) return Number(match[1]);
    await sleep(250);
  }
  throw new Error(`no callgrind dump for ${target} within 60 s`);
}
