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
 * Targets: gateway ≥ 80 % of the baseline's req/s, and at most +1 ms p50, at 32 connections (the first
 * ones); server CPU per request at most 2.0× the baseline's at 32 connections, and at most +0.25 ms p50
 * with one connection (docs/performance.md "Targets").
 * Three settings change the scenario (the targets are defined for the defaults):
 *  - BENCH_UPSTREAM_DELAY_MS=<ms> (0 by default, at most 1000): the upstream waits that long before each
 *    answer, as a wholesaler's own processing would, so the servers are no longer CPU-bound;
 *  - BENCH_CONNECTIONS=<n> (32 by default, 1 to 256): wrk's connections; 1 shows what one call pays;
 *  - BENCH_BASELINE_SPIN_US=<µs> (0 by default, at most 2000): the baseline spins the CPU that long per
 *    request before it answers (baseline-app.ts), so that its CPU per request shows what a server pays
 *    at a lower request rate for the same sockets (docs/performance.md "What a lower request rate costs").
 * The standard scenario then also measures the gateway against the pass-through at the gateway's own
 * request rate (equal-rate.ts: a baseline spinning the gateway's excess; about a minute; BENCH_EQUAL_RATE=0
 * leaves it out).
 * BENCH_START_SCRIPT=start:bounded-memory starts the gateway with that script's node flags instead (what
 * they cost per request; docs/configuration.md "Bounded memory").
 * Such a run writes bench/results/gateway[-upstream-<ms>ms][-c<n>][-spin-<µs>us][-bounded-memory][-profiled].json
 * instead.
 * BENCH_CPU_PROF=<dir> starts the three servers with `--cpu-prof` (into <dir>/gateway, baseline, floor) and
 * adds up their profiles per stage as the ledger does, under wrk (wrk-stages.ts; LEDGER_DETAIL=1 also
 * lists the heaviest functions per stage).
 * BENCH_FAST_PATHS=1 measures instead what each speed-up that doubles logic saves (fast-paths.ts);
 * `--ledger` (`npm run bench:gateway -- --ledger`) the CPU time of each stage of a request (ledger.ts);
 * `--builds <checkout>` this build's CPU per request against another checkout's under wrk (builds.ts).
 * Everything stays on 127.0.0.1 and stops by itself. Writes bench/results/gateway.json.
 */

import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectEveryArticleAsked } from '../common/availability-answer.js';
import { CLI, startWatchdog, stopAll, stopAndWait } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { checkWrk, writeWrkScript, wrk, wrkVersion } from '../common/wrk.js';
import { measureBuilds } from './builds.js';
import { measureEqualRate } from './equal-rate.js';
import { measureFastPaths } from './fast-paths.js';
import { type GcPerRequest, gcPerRequest, gcTotals } from './gc-figures.js';
import {
  availabilityBody,
  availabilityHeaders,
  boundedSetting,
  cpuRatios,
  forkChild,
  LOG_LEVEL,
  measure,
  median,
  medians,
  post,
  type RunResult,
  START_NODE_FLAGS,
  START_SCRIPT,
  startGateway,
  UPSTREAM_CONNECTIONS,
} from './harness.js';
import { measureInstructions } from './instructions.js';
import { measureLedger } from './ledger-run.js';
import { cpuProfileFlags, printWrkStages, wrkStages } from './wrk-stages.js';

const ROOT = process.cwd();
const UPSTREAM_DELAY_MS = boundedSetting('BENCH_UPSTREAM_DELAY_MS', 0, 0, 1000);
const CONNECTIONS = boundedSetting('BENCH_CONNECTIONS', 32, 1, 256);
const BASELINE_SPIN_US = boundedSetting('BENCH_BASELINE_SPIN_US', 0, 0, 2000);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
const SCENARIO = `${UPSTREAM_DELAY_MS === 0 ? '' : `-upstream-${UPSTREAM_DELAY_MS}ms`}${CONNECTIONS === 32 ? '' : `-c${CONNECTIONS}`}${BASELINE_SPIN_US === 0 ? '' : `-spin-${BASELINE_SPIN_US}us`}${START_SCRIPT === 'start' ? '' : `-${START_SCRIPT.replace(/^start:/, '')}`}${CPU_PROF_DIR === undefined ? '' : '-profiled'}`;
const RESULTS = join(ROOT, 'bench', 'results', `gateway${SCENARIO}.json`);
const RUNS = Math.min(Number(process.env.BENCH_RUNS ?? 3), 9);
const SECONDS = Math.min(Number(process.env.BENCH_SECONDS ?? 10), 60);
const WARMUP_SECONDS = 5;
/** The whole benchmark stops itself after this, whatever happens. */
const WATCHDOG_MS = 15 * 60_000;

type Target = 'gateway' | 'baseline' | 'floor';
const TARGETS: readonly Target[] = ['gateway', 'baseline', 'floor'];

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  checkWrk();
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-gateway-'));
  const stopWatchdog = startWatchdog(WATCHDOG_MS);
  try {
    const upstream = await forkChild('upstream', [String(UPSTREAM_DELAY_MS)]);
    const upstreamBase = `http://127.0.0.1:${upstream.port}/msv3/v2.0`;
    const profileFlags = (name: Target) =>
      CPU_PROF_DIR === undefined ? [] : cpuProfileFlags(CPU_PROF_DIR, name);
    const gateway = await startGateway(folder, upstreamBase, { nodeFlags: profileFlags('gateway') });
    const upstreamArgs = [`${upstreamBase}/verfuegbarkeitAnfragen`, String(UPSTREAM_CONNECTIONS)];
    const baselineArgs =
      BASELINE_SPIN_US === 0 ? upstreamArgs : [...upstreamArgs, `spin=${BASELINE_SPIN_US}`];
    const baseline = await forkChild('baseline', baselineArgs, { execArgv: profileFlags('baseline') });
    const floor = await forkChild('baseline', [...upstreamArgs, 'decode'], {
      execArgv: profileFlags('floor'),
    });
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

    const body = availabilityBody();
    const headers = availabilityHeaders(gateway.key);

    // Correctness first: the gateway maps all 50 articles; the baseline answers the same bytes.
    const answer = await post(`${baseUrls.gateway}/v1/availability`, headers, body);
    expectEveryArticleAsked(JSON.parse(answer), 'the gateway');
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
      wrk(`${baseUrls[target]}/v1/availability`, scripts[target], seconds, CONNECTIONS);

    console.log(`[bench] warm-up: ${WARMUP_SECONDS} s each`);
    for (const target of TARGETS) await wrkFor(target, WARMUP_SECONDS);

    const runs: Record<Target, RunResult[]> = { gateway: [], baseline: [], floor: [] };
    const gatewayGc: GcPerRequest[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const order = run % 2 === 1 ? TARGETS : [...TARGETS].reverse();
      for (const target of order) {
        const url = `${baseUrls[target]}/v1/availability`;
        const gcBefore = target === 'gateway' ? await gcTotals(baseUrls.gateway) : undefined;
        const row = await measure(
          `${target} run ${run}`,
          pids[target],
          url,
          scripts[target],
          SECONDS,
          CONNECTIONS,
        );
        runs[target].push(row);
        if (gcBefore !== undefined) gatewayGc.push(gcPerRequest(gcBefore, await gcTotals(baseUrls.gateway)));
        console.log(`[bench] run ${run} ${target.padEnd(8)} ${JSON.stringify(row)}`);
      }
    }

    const median = {
      gateway: medians(runs.gateway),
      baseline: medians(runs.baseline),
      floor: medians(runs.floor),
    };
    const equalRate =
      SCENARIO !== '' || process.env.BENCH_EQUAL_RATE === '0'
        ? null
        : await measureEqualRate({
            folder,
            upstreamArgs,
            answer,
            headers,
            body,
            gateway: {
              pid: pids.gateway,
              url: `${baseUrls.gateway}/v1/availability`,
              script: scripts.gateway,
            },
            gatewayCpuUs: median.gateway.server_cpu_us_per_request ?? 0,
            baselineCpuUs: median.baseline.server_cpu_us_per_request ?? 0,
            runs: RUNS,
            seconds: SECONDS,
            connections: CONNECTIONS,
            warmupSeconds: WARMUP_SECONDS,
          });
    upstream.child.send({ report: true });
    const { requests: upstreamRequests } = await upstream.when('requests');
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
      /** Server CPU per request, gateway ÷ baseline: the median of the runs' paired ratios. */
      cpu_gateway_over_baseline: pairedRatio(runs.gateway, runs.baseline),
      cpu_floor_over_baseline: pairedRatio(runs.floor, runs.baseline),
    };
    const targets = {
      /** The first two are defined for the default scenario (upstream at once, 32 connections). */
      apply_to_this_scenario: SCENARIO === '',
      throughput_at_least_80_percent: ratios.throughput_gateway_over_baseline >= 0.8,
      p50_added_at_most_1_ms: ratios.p50_added_us <= 1000,
      /** docs/performance.md "Targets": in the standard scenario as `npm start` runs the gateway; with one connection. */
      cpu_at_most_twice_baseline:
        SCENARIO !== '' || ratios.cpu_gateway_over_baseline === null
          ? null
          : ratios.cpu_gateway_over_baseline <= 2,
      /** The same, read against the pass-through at the gateway's own request rate (equal-rate.ts). */
      cpu_at_most_twice_baseline_at_equal_rate:
        equalRate === null ? null : equalRate.cpu_gateway_over_baseline <= 2,
      p50_added_at_most_250_us_at_one_connection: CONNECTIONS === 1 ? ratios.p50_added_us <= 250 : null,
    };
    const output = {
      benchmark: 'gateway overhead: POST /v1/availability, 50 items (bench/gateway/run.ts)',
      command: [
        UPSTREAM_DELAY_MS === 0 ? '' : `BENCH_UPSTREAM_DELAY_MS=${UPSTREAM_DELAY_MS} `,
        CONNECTIONS === 32 ? '' : `BENCH_CONNECTIONS=${CONNECTIONS} `,
        BASELINE_SPIN_US === 0 ? '' : `BENCH_BASELINE_SPIN_US=${BASELINE_SPIN_US} `,
        CPU_PROF_DIR === undefined ? '' : `BENCH_CPU_PROF=${CPU_PROF_DIR} `,
        'npm run bench:gateway',
      ].join(''),
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, wrk: wrkVersion() },
      setup: {
        load: `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, ${RUNS} runs after a ${WARMUP_SECONDS} s warm-up each, servers alternating, medians`,
        request: `${Buffer.byteLength(body)} B JSON, 50 items (the PZNs of the canned answer)`,
        response: `${Buffer.byteLength(answer)} B JSON (the gateway's answer; the baseline sends the same bytes)`,
        upstream: `node:http on 127.0.0.1 in its own process, ${upstream.bytes} B canned v2 verfuegbarkeitAnfragen answer, ${UPSTREAM_DELAY_MS === 0 ? 'at once' : `after ${UPSTREAM_DELAY_MS} ms`}`,
        gateway: `node ${[...START_NODE_FLAGS, ''].join(' ')}dist/cli.js serve (as npm ${START_SCRIPT === 'start' ? 'start' : `run ${START_SCRIPT}`}), own process; SQLite; catalogue wholesaler "bench" live → canned upstream; live key; LOG_LEVEL=${LOG_LEVEL} to /dev/null; RATE_LIMIT_LIVE_POINTS=1000000 (memory limiter); defaults otherwise (UPSTREAM_MAX_CONCURRENCY ${UPSTREAM_CONNECTIONS})`,
        baseline: `Fastify 5 (logger off) validating the same body schema (Ajv), undici Pool (${UPSTREAM_CONNECTIONS} connections) POSTing a fixed SOAP body, fixed JSON answer${BASELINE_SPIN_US === 0 ? '' : `, the CPU spun ${BASELINE_SPIN_US} µs per request`}`,
        floor:
          'the baseline plus verfuegbarkeitAnfragen.decodeResponse of the SOAP answer (decode-only reference; same fixed JSON answer)',
        cpu_profile: CPU_PROF_DIR ?? null,
      },
      upstream_requests: upstreamRequests,
      median,
      ratios,
      targets,
      runs,
      /** The gateway's garbage-collection pauses per run, from its /metrics (bench/gateway/gc-figures.ts). */
      gateway_gc: gatewayGc,
      /** The gateway against a baseline spinning the gateway's excess (equal-rate.ts); null outside the standard scenario. */
      equal_rate: equalRate,
    };
    printTable(median, ratios, targets, runs);
    if (equalRate !== null)
      console.log(
        `at the gateway's request rate: the baseline spinning ${equalRate.spin_us} µs per request spent ${equalRate.baseline_at_gateway_rate_us} µs beyond the spin (${equalRate.rate_cost_us >= 0 ? '+' : ''}${equalRate.rate_cost_us} µs against its own rate); gateway ÷ that ${equalRate.cpu_gateway_over_baseline}× (quartiles of the runs' ratios ${equalRate.cpu_gateway_over_baseline_quartiles.join('–')}; target 2.0×: ${equalRate.cpu_gateway_over_baseline <= 2 ? 'met' : 'NOT met'})`,
      );
    console.log(
      `gateway GC pauses per request (minor / major, µs) and major collections per run: ${gatewayGc.map((g) => `${g.minor_us_per_request} / ${g.major_us_per_request}, ${g.major_collections}`).join('; ')}`,
    );
    console.log(
      `voluntary context switches per request, all threads (medians): baseline ${median.baseline.server_voluntary_switches_per_request ?? '-'}, decode-only ${median.floor.server_voluntary_switches_per_request ?? '-'}, gateway ${median.gateway.server_voluntary_switches_per_request ?? '-'}`,
    );

    // The profiles are written as the servers exit.
    const exited = (child: ChildProcess) =>
      child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : Promise.resolve();
    baseline.child.send({ stop: true });
    floor.child.send({ stop: true });
    await Promise.all([stopAndWait(gateway.child), exited(baseline.child), exited(floor.child)]);
    upstream.child.send({ stop: true });
    const stages =
      CPU_PROF_DIR === undefined
        ? null
        : wrkStages(
            CPU_PROF_DIR,
            Object.fromEntries(TARGETS.map((t) => [t, median[t].server_cpu_us_per_request ?? 0])),
          );
    if (stages !== null) printWrkStages(stages, process.env.LEDGER_DETAIL === '1');
    writeResults(RESULTS, { ...output, stages_under_wrk: stages });
    console.log(`[bench] wrote ${RESULTS}`);
  } finally {
    stopWatchdog();
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

function printTable(
  median: Record<Target, RunResult>,
  ratios: {
    throughput_gateway_over_baseline: number;
    throughput_floor_over_baseline: number;
    p50_added_us: number;
    p99_added_us: number;
    cpu_gateway_over_baseline: number | null;
    cpu_floor_over_baseline: number | null;
  },
  targets: {
    apply_to_this_scenario: boolean;
    throughput_at_least_80_percent: boolean;
    p50_added_at_most_1_ms: boolean;
    cpu_at_most_twice_baseline: boolean | null;
    p50_added_at_most_250_us_at_one_connection: boolean | null;
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
      ratios.cpu_gateway_over_baseline === null ? '' : `${ratios.cpu_gateway_over_baseline}×`,
      '',
    ],
    [
      'decode-only vs baseline',
      `${(ratios.throughput_floor_over_baseline * 100).toFixed(1)} %`,
      '',
      '',
      ratios.cpu_floor_over_baseline === null ? '' : `${ratios.cpu_floor_over_baseline}×`,
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
  const verdict = (met: boolean | null) => (met === null ? '-' : met ? 'met' : 'NOT met');
  console.log(
    `targets${targets.apply_to_this_scenario ? '' : ' (defined for the default scenario: upstream at once, 32 connections)'}: throughput ≥ 80 % of baseline: ${verdict(targets.throughput_at_least_80_percent)}; p50 added ≤ 1,000 µs: ${verdict(targets.p50_added_at_most_1_ms)}`,
  );
  console.log(
    `targets of docs/performance.md: CPU per request ≤ 2.0× the baseline (32 connections): ${verdict(targets.cpu_at_most_twice_baseline)}; p50 added ≤ 250 µs with one connection: ${verdict(targets.p50_added_at_most_250_us_at_one_connection)}`,
  );
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The median of the runs' paired ratios of server CPU per request. */
function pairedRatio(runs: RunResult[], reference: RunResult[]): number | null {
  const ratios = cpuRatios(runs, reference);
  return ratios === null ? null : round(median(ratios), 2);
}

process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopAll();
    process.exit(130);
  });
}

(process.env.BENCH_FAST_PATHS === '1'
  ? measureFastPaths()
  : process.argv.includes('--ledger')
    ? measureLedger()
    : process.argv.includes('--builds')
      ? measureBuilds(process.argv[process.argv.indexOf('--builds') + 1] ?? '')
      : process.argv.includes('--instructions')
        ? measureInstructions()
        : main()
).catch((error: unknown) => {
  console.error(error);
  stopAll();
  process.exitCode = 1;
});
