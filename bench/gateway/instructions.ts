/**
 * Instructions per request (`npm run bench:gateway -- --instructions`): the servers of the gateway
 * benchmark (gateway as `npm start` runs it, pass-through baseline, decode-only reference), each in its
 * own process under valgrind's callgrind, which counts the instructions the process executes in user
 * space. A count does not depend on the machine's speed or load, so a change of a few per cent shows in
 * one run, where CPU time on a VM swings by a quarter between runs.
 *
 * For each server: WARMUP requests with the instrumentation off (JIT tiers come up: V8 moves a small
 * function called once per request to TurboFan only after several thousand calls, which at full speed
 * takes seconds), then it is switched on (`callgrind_control -i on`), the counters zeroed, REQUESTS
 * requests sent (CONCURRENCY in flight, from this process over loopback), and the counters dumped;
 * instructions per request are the dump's total ÷ REQUESTS. Then, with no requests, a second window (as
 * long as the counted one, at most INSTRUCTIONS_IDLE_MS) counts the server's time-driven work (timers,
 * periodic jobs): under valgrind the counted window lasts some 50 times longer than at full speed and
 * so holds that much more of it. Its rate, scaled to the counted window, is subtracted from the main
 * thread's count for the figure of the work per request. Not counted: the kernel (socket reads and
 * writes, a third of the baseline's CPU time under wrk) and the load generator. Valgrind runs one
 * thread at a time, so V8's helper threads (concurrent compilation and marking) count too, as they
 * would in CPU time; the main thread's count alone is reported beside it, since background compilation
 * still running in the counted window moves the total by a few per cent between runs.
 * Writes bench/results/gateway-instructions.json. Everything stays on 127.0.0.1 and stops by itself.
 */
import { type ChildProcess, execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { expectEveryArticleAsked } from '../common/availability-answer.js';
import { stopAll, stopAndWait } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import {
  availabilityBody,
  boundedSetting,
  forkChild,
  nodeFlagsSetting,
  startGateway,
  UPSTREAM_CONNECTIONS,
} from './harness.js';

const RESULTS = join(process.cwd(), 'bench', 'results', 'gateway-instructions.json');
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
/**
 * Node 22 and later compile the request path with TurboFan only after 10,000 to 12,000 requests (Maglev
 * before), so they are counted after 30,000 (docs/performance.md "On Node 24"); Node 20 after 10,000.
 */
const WARMUP = boundedSetting('INSTRUCTIONS_WARMUP', NODE_MAJOR >= 22 ? 30_000 : 10_000, 100, 100_000);
const REQUESTS = boundedSetting('INSTRUCTIONS_REQUESTS', 1_000, 50, 100_000);
const CONCURRENCY = boundedSetting('INSTRUCTIONS_CONCURRENCY', 8, 1, 64);
/** The longest window without requests in which time-driven work is counted (ms). */
const IDLE_MS = boundedSetting('INSTRUCTIONS_IDLE_MS', 15_000, 1_000, 120_000);
/** Helper threads' instructions above this share of the main thread's: not yet the steady state. */
const HELPERS_BUSY_SHARE = 0.25;
/** Where callgrind's files go, to read them with callgrind_annotate (a temporary folder by default). */
const DUMPS = process.env.INSTRUCTIONS_DUMPS;
/** The servers counted, in order: the gateway first, since the others answer with its answer. */
const ALL_TARGETS = ['gateway', 'baseline', 'floor'] as const;
/**
 * V8's memory reducer starts full collections when a process allocates slowly for a while, as every
 * process under valgrind does, 50 times slower than at full speed: whether one falls into the counted
 * window decided up to 0.15 M instructions per request of the gateway (docs/performance.md
 * "Instructions per request"). Under load at full speed it waits in vain for a low allocation rate,
 * so it is off under valgrind.
 */
const VALGRIND_NODE_FLAGS = ['--no-memory-reducer'];
/** Node flags for the three servers besides `npm start`'s (`--perf-basic-prof` names JIT code for callgrind's callers). */
const NODE_FLAGS = [...VALGRIND_NODE_FLAGS, ...nodeFlagsSetting('INSTRUCTIONS_NODE_FLAGS')];
/**
 * `--check` (`npm run check:instructions`, a step of CI): the gateway and the pass-through only, and the
 * run fails when the gateway's per-request work exceeds its Node release's budget (INSTRUCTION_BUDGETS)
 * times the pass-through's.
 */
const CHECK = process.argv.includes('--check');
/**
 * The gateway's per-request instructions (main thread, time-driven work subtracted) at most this many
 * times the pass-through's, per Node release, after the default warm-up. The build they were set for
 * counted 2.77× on Node 20 (an earlier build 2.95–2.98× on AMD EPYC and Intel Xeon VMs alike) and 2.97×
 * on Node 24, whose V8 runs the pass-through 10 % cheaper; two runs of one build differ by about 1 %, so
 * a change that adds about 6 % to every request fails either (docs/performance.md "Keeping it there").
 * Lower them when a change saves instructions; raise them only with the reason in the commit.
 */
const INSTRUCTION_BUDGETS: Readonly<Record<number, number>> = { 20: 2.95, 24: 3.15 };
/**
 * Some of the servers only (`INSTRUCTIONS_TARGETS=floor`): to read one change in two or three minutes
 * instead of six. No results file is written. Without the gateway the others answer an empty body,
 * which saves them the sending of its 17 KB answer (about 65 K instructions per request): compare such
 * counts only with counts of the same kind of run.
 */
const TARGETS = (CHECK ? 'gateway,baseline' : (process.env.INSTRUCTIONS_TARGETS ?? ALL_TARGETS.join(',')))
  .split(',')
  .map((target) => target.trim())
  .filter((target): target is Target => (ALL_TARGETS as readonly string[]).includes(target));
const runAsync = promisify(execFile);

type Target = (typeof ALL_TARGETS)[number];

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
    // A file per thread: the main thread's count leaves out V8's background compilation.
    '--separate-threads=yes',
    `--callgrind-out-file=${join(DUMPS ?? folder, `${target}.%p.out`)}`,
  ];
  try {
    const upstream = await forkChild('upstream', ['0']);
    const upstreamBase = `http://127.0.0.1:${upstream.port}/msv3/v2.0`;
    const body = availabilityBody();
    const perRequest: Partial<Record<Target, number>> = {};
    const mainThread: Partial<Record<Target, number>> = {};
    const timeDrivenPerRequest: Partial<Record<Target, number>> = {};
    const perRequestWork: Partial<Record<Target, number>> = {};
    const windows: Partial<Record<Target, { counted_ms: number; idle_ms: number }>> = {};
    // The gateway first: the baselines answer with its answer, so all send the same bytes.
    let answer = '';
    for (const target of ALL_TARGETS.filter((t) => TARGETS.includes(t))) {
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
      } else if ((await send()) !== answer && TARGETS.includes('gateway'))
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
      const windowStarted = Date.now();
      await load(REQUESTS);
      const windowMs = Date.now() - windowStarted;
      await control('--dump');
      const counted = await dumpedInstructions(DUMPS ?? folder, `${target}.${pid}`, 1);
      // The same server without requests: what its timers and periodic jobs (the webhook worker's look
      // for due deliveries, say) cost per second. Valgrind slows the process some 50 times, so the
      // counted window lasts that much longer than at full speed and holds that much more of such work
      // than a second of real traffic would; it is subtracted for the main thread's figure.
      const idleMs = Math.min(windowMs, IDLE_MS);
      const idleStarted = Date.now();
      await sleep(idleMs);
      await control('--dump');
      const idleElapsedMs = Date.now() - idleStarted;
      const idle = await dumpedInstructions(DUMPS ?? folder, `${target}.${pid}`, 2);
      const timeDriven = (idle.mainThread / idleElapsedMs) * windowMs;
      perRequest[target] = Math.round(counted.total / REQUESTS);
      mainThread[target] = Math.round(counted.mainThread / REQUESTS);
      timeDrivenPerRequest[target] = Math.round(timeDriven / REQUESTS);
      perRequestWork[target] = mainThread[target]! - timeDrivenPerRequest[target]!;
      windows[target] = { counted_ms: windowMs, idle_ms: idleElapsedMs };
      console.log(
        `[instructions] ${target.padEnd(8)} ${(perRequest[target]! / 1e6).toFixed(3)} M per request, main thread ${(mainThread[target]! / 1e6).toFixed(3)} M, of it per request ${(perRequestWork[target]! / 1e6).toFixed(3)} M and time-driven ${(timeDrivenPerRequest[target]! / 1e6).toFixed(3)} M (window ${(windowMs / 1000).toFixed(0)} s; ${((Date.now() - started) / 1000).toFixed(0)} s)`,
      );
      warnIfHelpersBusy(target, perRequest[target]! - mainThread[target]!, mainThread[target]!);
      await pool.close();
      // Waited for: valgrind writes its last files into the folder as the process exits.
      await stopAndWait(server.child);
    }
    upstream.child.send({ stop: true });
    if (CHECK) checkBudget(perRequestWork.gateway!, perRequestWork.baseline!);
    if (TARGETS.length < ALL_TARGETS.length) return;
    const ratio = (a: Target, b: Target, of = perRequest) => Math.round((of[a]! / of[b]!) * 100) / 100;
    const output = {
      benchmark:
        'gateway instructions per request: POST /v1/availability, 50 items, callgrind (bench/gateway/instructions.ts)',
      command: 'npm run bench:gateway -- --instructions',
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
      setup: `each server alone under valgrind --tool=callgrind; ${WARMUP} warm-up requests uninstrumented, then ${REQUESTS} counted, ${CONCURRENCY} in flight; user-space instructions of the server process (all its threads); node flags ${NODE_FLAGS.join(' ')}`,
      instructions_per_request: perRequest,
      /** The main thread alone: JavaScript, the runtime and garbage collection there, no background compilation. */
      main_thread_instructions_per_request: mainThread,
      ratio_gateway_over_baseline: ratio('gateway', 'baseline'),
      ratio_floor_over_baseline: ratio('floor', 'baseline'),
      ratio_gateway_over_floor: ratio('gateway', 'floor'),
      main_thread_ratio_gateway_over_baseline: ratio('gateway', 'baseline', mainThread),
      main_thread_ratio_floor_over_baseline: ratio('floor', 'baseline', mainThread),
      /**
       * The main thread's count less its time-driven work (timers, periodic jobs), measured in a window
       * without requests right after the counted one and scaled to the counted window's length.
       */
      main_thread_per_request_work: perRequestWork,
      main_thread_time_driven_per_request: timeDrivenPerRequest,
      windows,
      per_request_work_ratio_gateway_over_baseline: ratio('gateway', 'baseline', perRequestWork),
      per_request_work_ratio_floor_over_baseline: ratio('floor', 'baseline', perRequestWork),
    };
    writeResults(RESULTS, output);
    console.log(
      `instructions per request: gateway ${perRequest.gateway}, baseline ${perRequest.baseline}, decode-only ${perRequest.floor}; gateway ÷ baseline ${output.ratio_gateway_over_baseline}×, decode-only ÷ baseline ${output.ratio_floor_over_baseline}×; main thread ${output.main_thread_ratio_gateway_over_baseline}× and ${output.main_thread_ratio_floor_over_baseline}×; main thread without time-driven work ${output.per_request_work_ratio_gateway_over_baseline}× and ${output.per_request_work_ratio_floor_over_baseline}×`,
    );
    console.log(`[bench] wrote ${RESULTS}`);
  } finally {
    stopAll();
    // The servers just stopped may still be writing their last files (valgrind's dumps, SQLite's): a
    // folder that is not empty yet is tried again (seen as ENOTEMPTY on Node 24).
    rmSync(folder, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

/**
 * In the steady state the server's other threads (V8's compilers and garbage collector, libuv's pool)
 * run a few per cent of the main thread's instructions. Far more means the count fell on a step of
 * the warm-up: Node 24's V8 compiles the request path with TurboFan only after 10,000 to 12,000
 * requests (docs/performance.md "On Node 24").
 */
function warnIfHelpersBusy(target: Target, helpers: number, mainThread: number): void {
  if (helpers <= HELPERS_BUSY_SHARE * mainThread) return;
  console.warn(
    `[instructions] ${target}: the other threads ran ${(helpers / 1e6).toFixed(3)} M instructions per request, ${Math.round((helpers / mainThread) * 100)} % of the main thread's: compilers or the garbage collector were still busy; a longer INSTRUCTIONS_WARMUP (${WARMUP} now) counts the steady state`,
  );
}

/** `--check`: one line with the verdict; a failing exit status when the gateway is over its budget. */
function checkBudget(gateway: number, baseline: number): void {
  const budget = INSTRUCTION_BUDGETS[NODE_MAJOR];
  const ratio = gateway / baseline;
  const figures = `gateway ${(gateway / 1e6).toFixed(3)} M, pass-through ${(baseline / 1e6).toFixed(3)} M instructions of per-request work on Node ${process.versions.node}: ${ratio.toFixed(2)}×`;
  if (budget === undefined) {
    console.error(
      `[instructions] NO BUDGET for Node ${NODE_MAJOR}: ${figures}; budgets are set for Node ${Object.keys(INSTRUCTION_BUDGETS).join(' and ')} (INSTRUCTION_BUDGETS, bench/gateway/instructions.ts).`,
    );
    process.exitCode = 1;
    return;
  }
  if (ratio <= budget) {
    console.log(`[instructions] within budget: ${figures} (budget ${budget}× on Node ${NODE_MAJOR})`);
    return;
  }
  console.error(
    `[instructions] OVER BUDGET: ${figures} (budget ${budget}× on Node ${NODE_MAJOR}). A change adds work to every request; INSTRUCTIONS_DUMPS=<dir> INSTRUCTIONS_NODE_FLAGS=--perf-basic-prof npm run bench:gateway -- --instructions keeps callgrind's files to compare with the build before (docs/performance.md "Keeping it there").`,
  );
  process.exitCode = 1;
}

async function startCountedGateway(
  folder: string,
  upstreamBase: string,
  valgrind: string[],
): Promise<Counted> {
  const { child, url, key, env } = await startGateway(folder, upstreamBase, {
    nodeFlags: NODE_FLAGS,
    under: { command: ['valgrind', ...valgrind], listenWithinMs: 300_000 },
  });
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
  const { child, port, when } = await forkChild('baseline', args, {
    execPath: 'valgrind',
    execArgv: [...valgrind, process.execPath, ...NODE_FLAGS],
    quiet: true,
    readyWithinMs: 300_000,
  });
  child.send({ answer });
  await when('answerSet');
  return { child, env: process.env, url: `http://127.0.0.1:${port}`, headers: {} };
}

/**
 * The totals of callgrind's dump number `dump` for `target` (a file per thread, `….out.<dump>-01` the
 * main thread): all threads, and the main thread. The process writes them when it next runs, which may
 * be after `callgrind_control` has returned: waits up to 60 s for the main thread's file.
 */
async function dumpedInstructions(
  folder: string,
  target: string,
  dump: number,
): Promise<{ total: number; mainThread: number }> {
  const totalOf = (file: string) => {
    const match = /^totals: (\d+)/m.exec(readFileSync(join(folder, file), 'utf8'));
    return match === null ? null : Number(match[1]);
  };
  for (let waited = 0; waited < 60_000; waited += 250) {
    const dumps = readdirSync(folder).filter((f) => f.startsWith(`${target}.`) && /\.out\.\d+-\d+$/.test(f));
    if (dumps.some((f) => Number(/\.out\.(\d+)-/.exec(f)![1]) > dump))
      throw new Error(`more callgrind dumps than expected for ${target}: ${dumps.join(', ')}`);
    const main = dumps.find((f) => f.endsWith(`.out.${dump}-01`));
    const mainThread = main === undefined ? null : totalOf(main);
    if (mainThread !== null) {
      await sleep(500); // the other threads' files are written in the same dump
      const totals = readdirSync(folder)
        .filter((f) => f.startsWith(`${target}.`) && f.includes(`.out.${dump}-`))
        .map((f) => totalOf(f) ?? 0);
      return { total: totals.reduce((a, b) => a + b, 0), mainThread };
    }
    await sleep(250);
  }
  throw new Error(`no callgrind dump for ${target} within 60 s`);
}
