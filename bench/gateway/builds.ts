/**
 * Two builds of the gateway side by side under wrk (`npm run bench:gateway -- --builds <checkout>`):
 * this checkout's `dist/` and another checkout's (built with `npm run build` there), each started as
 * `npm start` starts it with its own SQLite database, both calling one canned upstream. After a warm-up
 * each, BUILDS_ROUNDS (6) rounds of BENCH_SECONDS (8) s runs of the standard load (wrk -t1 -c32 or
 * BENCH_CONNECTIONS), the two alternating and the order turning each round; per round the ratio of
 * their server CPU per request, reported as the median of those ratios with the quartiles. A change of
 * a few per cent shows here where separate runs of `npm run bench:gateway` on a VM whose speed drifts
 * would hide it. BUILDS_OTHER_NODE_FLAGS adds node flags to the other build's gateway (`--builds .`
 * with a flag measures the flag). Writes bench/results/gateway-builds.json. Everything stays on 127.0.0.1.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expectEveryArticleAsked } from '../common/availability-answer.js';
import { startWatchdog, stopAll } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { checkWrk, writeWrkScript, wrk, wrkVersion } from '../common/wrk.js';
import {
  availabilityBody,
  availabilityHeaders,
  boundedSetting,
  cpuRatios,
  forkChild,
  measure,
  median,
  nodeFlagsSetting,
  post,
  type RunResult,
  startGateway,
} from './harness.js';

const RESULTS = join(process.cwd(), 'bench', 'results', 'gateway-builds.json');
const ROUNDS = boundedSetting('BUILDS_ROUNDS', 6, 1, 40);
const SECONDS = boundedSetting('BENCH_SECONDS', 8, 2, 60);
const CONNECTIONS = boundedSetting('BENCH_CONNECTIONS', 32, 1, 256);
const WARMUP_SECONDS = 5;
/** Node flags for the other build's gateway only (`--builds .` with a flag: the flag on and off). */
const OTHER_NODE_FLAGS = nodeFlagsSetting('BUILDS_OTHER_NODE_FLAGS');

type Build = 'this' | 'other';

export async function measureBuilds(other: string): Promise<void> {
  checkWrk();
  const otherCli = join(resolve(other), 'dist', 'cli.js');
  if (!existsSync(otherCli)) throw new Error(`${otherCli} is missing: run \`npm run build\` in ${other}`);
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-builds-'));
  // Bounded: the rounds, warm-ups and start-ups take well under this.
  const watchdogMs = (ROUNDS * 2 * (SECONDS + 2) + 2 * WARMUP_SECONDS + 120) * 1000;
  const stopWatchdog = startWatchdog(watchdogMs);
  try {
    const upstream = await forkChild('upstream', ['0']);
    const upstreamBase = `http://127.0.0.1:${upstream.port}/msv3/v2.0`;
    const body = availabilityBody();
    const setupFor = async (name: Build, options: { cli?: string; nodeFlags?: string[] } = {}) => {
      mkdirSync(join(folder, name));
      const gateway = await startGateway(join(folder, name), upstreamBase, options);
      const headers = availabilityHeaders(gateway.key);
      const url = `${gateway.url}/v1/availability`;
      return { pid: gateway.child.pid!, headers, url, script: writeWrkScript(folder, name, headers, body) };
    };
    const setups = {
      this: await setupFor('this'),
      other: await setupFor('other', { cli: otherCli, nodeFlags: OTHER_NODE_FLAGS }),
    };
    for (const [name, setup] of Object.entries(setups)) {
      expectEveryArticleAsked(JSON.parse(await post(setup.url, setup.headers, body)), `the ${name} build`);
      await wrk(setup.url, setup.script, WARMUP_SECONDS, CONNECTIONS);
    }
    const runs: Record<Build, RunResult[]> = { this: [], other: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? (['other', 'this'] as const) : (['this', 'other'] as const);
      for (const name of order) {
        const { pid, url, script } = setups[name];
        const row = await measure(`${name} round ${round}`, pid, url, script, SECONDS, CONNECTIONS);
        runs[name].push(row);
        console.log(`[bench] round ${round} ${name.padEnd(5)} ${JSON.stringify(row)}`);
      }
    }
    const ratios = cpuRatios(runs.this, runs.other)?.sort((a, b) => a - b);
    if (ratios === undefined) throw new Error('server CPU per request needs /proc');
    const quartile = (q: number) => Math.round(ratios[Math.floor(q * (ratios.length - 1))]! * 1000) / 1000;
    const cpu = (name: Build) => median(runs[name].map((r) => r.server_cpu_us_per_request ?? 0));
    const switches = (name: Build) =>
      median(runs[name].map((r) => r.server_voluntary_switches_per_request ?? 0));
    const output = {
      benchmark:
        'two gateway builds side by side under wrk: POST /v1/availability, 50 items (bench/gateway/builds.ts)',
      command: `${OTHER_NODE_FLAGS.length === 0 ? '' : `BUILDS_OTHER_NODE_FLAGS='${OTHER_NODE_FLAGS.join(' ')}' `}npm run bench:gateway -- --builds ${other}`,
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, wrk: wrkVersion() },
      setup: `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, ${ROUNDS} rounds after a ${WARMUP_SECONDS} s warm-up each, the builds alternating`,
      this_build: resolve('.'),
      other_build: resolve(other),
      other_node_flags: OTHER_NODE_FLAGS,
      median_server_cpu_us_per_request: { this: cpu('this'), other: cpu('other') },
      median_voluntary_switches_per_request: { this: switches('this'), other: switches('other') },
      cpu_this_over_other: {
        median: quartile(0.5),
        lower_quartile: quartile(0.25),
        upper_quartile: quartile(0.75),
      },
      runs,
    };
    console.log(
      `\nserver CPU per request, medians of ${ROUNDS} rounds: this build ${cpu('this')} µs, the other ${cpu('other')} µs; this ÷ other ${quartile(0.5)} (quartiles ${quartile(0.25)}–${quartile(0.75)}); voluntary context switches per request ${switches('this')} against ${switches('other')}`,
    );
    writeResults(RESULTS, output);
    console.log(`[bench] wrote ${RESULTS}`);
    upstream.child.send({ stop: true });
  } finally {
    stopWatchdog();
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}
