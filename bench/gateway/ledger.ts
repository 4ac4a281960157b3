/**
 * The cost ledger of bench/gateway: where the gateway's CPU time per request goes, stage by stage
 * (`npm run bench:gateway -- --ledger`, docs/performance.md "Cost ledger").
 *
 * One process, started by run.ts with the node flags of `npm start`, holds three apps: the gateway
 * (`startServer`, as `npm start` runs it: SQLite, a live key, the in-memory rate limiter, LOG_LEVEL=info
 * with its lines written to /dev/null, metrics on), the pass-through baseline and the decode-only
 * reference (bench/gateway/baseline-app.ts). All three call the canned upstream (its own process) and
 * are driven with `app.inject` (no client sockets), CONCURRENCY requests in flight. For each app:
 * warm-up, then REQUESTS requests with the process's CPU time (user + system) read before and after,
 * the apps alternating over ROUNDS rounds; medians. Then the gateway once more under V8's sampling
 * profiler (`node:inspector`): each sample goes to the stage of the innermost frame on its stack that a
 * rule of STAGES claims (node's own modules and V8 built-ins are passed over, so `JSON.stringify` in a
 * log line counts as logging), and the stage shares times the measured CPU per request give µs.
 * LEDGER_COMPARE=<another checkout, built> adds that checkout's gateway to the same rounds and
 * profiles: a before and after measured side by side. Writes bench/results/gateway-ledger.json.
 * argv: the upstream base URL (…/msv3/v2.0), the gateway's work folder.
 */

import { Session } from 'node:inspector/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { allocatedBytes } from '../../test/allocated-bytes.js';
import { expectEveryArticleAsked } from '../common/availability-answer.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import { allocationShares } from './allocations.js';
import { buildBaselineApp } from './baseline-app.js';
import { availabilityBody, boundedSetting, median, quantile, UPSTREAM_CONNECTIONS } from './harness.js';
import { type CpuProfileNode, cpuProfileStages, type StageProfile } from './stages.js';

const REQUESTS = boundedSetting('LEDGER_REQUESTS', 20_000, 100, 1_000_000);
/** Many short rounds (`LEDGER_ROUNDS=30 LEDGER_REQUESTS=2000`) pair a before/after more tightly on a noisy VM. */
const ROUNDS = boundedSetting('LEDGER_ROUNDS', 3, 1, 99);
const CONCURRENCY = boundedSetting('LEDGER_CONCURRENCY', 16, 1, 256);
const WARMUP = Math.min(5_000, REQUESTS * ROUNDS);
/** Requests per app for the allocation figures (they do not move with the load). */
const ALLOCATION_REQUESTS = Math.min(5_000, REQUESTS);
/** Another checkout (its `dist/` built): its gateway runs beside this one, for a before/after in one process. */
const COMPARE = process.env.LEDGER_COMPARE;
/**
 * Settings of the compared gateway only, a JSON object (`{"FAST_PATH_SERIALIZER":"false"}`): with
 * `LEDGER_COMPARE=.` a switch measured on and off side by side, in one process.
 */
const COMPARE_SETTINGS = JSON.parse(process.env.LEDGER_COMPARE_SETTINGS ?? '{}') as Record<string, string>;
/** The profiler's sampling interval, µs. */
const SAMPLING_US = 50;

type App = { inject: (options: object) => Promise<{ statusCode: number; body: string }> };

/**
 * A gateway built from `root`'s `dist/` (as `npm start` runs it), with its own SQLite database in
 * `folder` and a live key made with that checkout's CLI.
 */
async function startGatewayFrom(
  root: string,
  folder: string,
  upstreamBase: string,
  name: string,
  settings: Record<string, string> = {},
) {
  const fromDist = <T>(module: string) =>
    import(pathToFileURL(join(root, 'dist', module)).href) as Promise<T>;
  const { loadConfig } = await fromDist<typeof import('../../src/config.js')>('config.js');
  const { createLogger } =
    await fromDist<typeof import('../../src/observability/logger.js')>('observability/logger.js');
  const { startServer } = await fromDist<typeof import('../../src/server.js')>('server.js');
  const env = benchGatewayEnv({
    folder: join(folder, name),
    upstream: { baseUrl: upstreamBase, name: 'Canned upstream' },
    databaseFile: 'ledger.db',
    settings: { RATE_LIMIT_LIVE_POINTS: '1000000', RATE_LIMIT_TEST_POINTS: '1000000', ...settings },
  });
  const key = createLiveKey(env, 'ledger', join(root, 'dist', 'cli.js'));
  // As `npm start` logs: one JSON line per request, written synchronously (src/observability/logger.ts),
  // here to /dev/null instead of standard output.
  const logger = createLogger({
    level: 'info',
    destination: pino.destination({ dest: '/dev/null', sync: true }),
  });
  const server = await startServer({ config: loadConfig(env), logger, summary: false });
  return { server, key };
}

type Name = 'gateway' | 'compare' | 'baseline' | 'floor';

async function main(): Promise<void> {
  const [upstreamBase, folder] = process.argv.slice(2) as [string, string];
  const { server, key } = await startGatewayFrom(process.cwd(), folder, upstreamBase, 'gateway');
  const other =
    COMPARE === undefined
      ? undefined
      : await startGatewayFrom(COMPARE, folder, upstreamBase, 'compare', COMPARE_SETTINGS);
  const upstreamUrl = `${upstreamBase}/verfuegbarkeitAnfragen`;
  const baseline = buildBaselineApp(upstreamUrl, UPSTREAM_CONNECTIONS, false);
  const floor = buildBaselineApp(upstreamUrl, UPSTREAM_CONNECTIONS, true);
  await baseline.app.ready();
  await floor.app.ready();

  const request = {
    method: 'POST' as const,
    url: '/v1/availability',
    headers: {
      'content-type': 'application/json',
      'x-api-key': key,
      'x-msv3-username': 'bench1',
      'x-msv3-password': 'geheim',
    },
    payload: availabilityBody(),
  };
  const first = await (server.app as unknown as App).inject(request);
  const headersOf = (secret: string) => ({ ...request.headers, 'x-api-key': secret });
  if (first.statusCode !== 200) throw new Error(`the gateway answered ${first.statusCode} ${first.body}`);
  expectEveryArticleAsked(JSON.parse(first.body), 'the gateway');
  baseline.setAnswer(first.body);
  floor.setAnswer(first.body);
  const apps: Partial<Record<Name, App>> = {
    gateway: server.app as unknown as App,
    ...(other === undefined ? {} : { compare: other.server.app as unknown as App }),
    baseline: baseline.app as unknown as App,
    floor: floor.app as unknown as App,
  };
  const names = Object.keys(apps) as Name[];
  const requestFor = (name: Name) =>
    name === 'compare' ? { ...request, headers: headersOf(other!.key) } : request;
  for (const name of names) {
    const answer = await apps[name]!.inject(requestFor(name));
    if (answer.body !== first.body) throw new Error(`${name} does not answer the gateway's bytes`);
  }

  const drive = async (name: Name, count: number) => {
    const app = apps[name]!;
    const sent = requestFor(name);
    let left = count;
    const worker = async () => {
      while (left > 0) {
        left -= 1;
        const answer = await app.inject(sent);
        if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}: ${answer.body}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  const cpuPerRequest = async (name: Name) => {
    const before = process.cpuUsage();
    await drive(name, REQUESTS);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / REQUESTS;
  };

  console.log(`[ledger] warm-up: ${WARMUP} requests each`);
  for (const name of names) await drive(name, WARMUP);
  const loads: number[] = [];
  const rounds: Partial<Record<Name, number[]>> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    loads.push(round2(loadavg()[0]!));
    const order = round % 2 === 1 ? names : [...names].reverse();
    for (const name of order) {
      const us = await cpuPerRequest(name);
      rounds[name]!.push(round2(us));
      console.log(`[ledger] round ${round} ${name.padEnd(8)} ${us.toFixed(1)} µs CPU per request`);
    }
  }
  const cpu = Object.fromEntries(names.map((name) => [name, median(rounds[name]!)])) as Partial<
    Record<Name, number>
  >;
  /** The median of the rounds' ratios: each round's apps ran a minute apart at most, so load cancels out. */
  const ratios = (a: Name, b: Name) =>
    rounds[a]!.map((value, i) => value / rounds[b]![i]!).sort((x, y) => x - y);
  const ratio = (a: Name, b: Name) => round2(median(ratios(a, b)));
  /** The interquartile range of the rounds' paired ratios: how far one round's before/after can be trusted. */
  const quartiles = (a: Name, b: Name) => [0.25, 0.75].map((q) => round2(quantile(ratios(a, b), q)));

  const profiled = names.filter((name) => name !== 'floor');
  const profiles: Partial<Record<Name, StageProfile>> = {};
  for (const name of profiled) {
    console.log(`[ledger] profiling ${name}: ${REQUESTS} requests, a sample every ${SAMPLING_US} µs`);
    loads.push(round2(loadavg()[0]!));
    profiles[name] = await profileStages(() => drive(name, REQUESTS));
  }
  // Allocation is the same whatever the load: one pass per app, then the sampling heap profiler.
  const allocated: Partial<Record<Name, number>> = {};
  for (const name of names) {
    const bytes = await allocatedBytes(() => drive(name, ALLOCATION_REQUESTS));
    allocated[name] = Math.round(bytes / ALLOCATION_REQUESTS);
    console.log(
      `[ledger] ${name.padEnd(8)} allocates ${(allocated[name]! / 1024).toFixed(1)} KB per request`,
    );
  }
  const allocationProfiles: Partial<Record<Name, StageProfile>> = {};
  for (const name of profiled)
    allocationProfiles[name] = await allocationShares(() => drive(name, ALLOCATION_REQUESTS));
  const stages = [
    ...new Set(
      profiled.flatMap((name) => [
        ...Object.keys(profiles[name]!.shares),
        ...Object.keys(allocationProfiles[name]!.shares),
      ]),
    ),
  ];
  const usOf = (name: Name, stage: string) => round2((profiles[name]?.shares[stage] ?? 0) * cpu[name]!);
  const kbOf = (name: Name, stage: string) =>
    round2(((allocationProfiles[name]?.shares[stage] ?? 0) * allocated[name]!) / 1024);
  const table = stages
    .map((stage) => ({
      stage,
      gateway_us: usOf('gateway', stage),
      gateway_percent: round2((profiles.gateway!.shares[stage] ?? 0) * 100),
      ...(other === undefined ? {} : { compare_us: usOf('compare', stage) }),
      baseline_us: usOf('baseline', stage),
      added_us: round2(usOf('gateway', stage) - usOf('baseline', stage)),
      gateway_kb: kbOf('gateway', stage),
      ...(other === undefined ? {} : { compare_kb: kbOf('compare', stage) }),
      baseline_kb: kbOf('baseline', stage),
      top_functions: profiles.gateway!.top[stage] ?? [],
      top_allocating_functions: allocationProfiles.gateway!.top[stage] ?? [],
      ...(other === undefined ? {} : { compare_top_functions: profiles.compare!.top[stage] ?? [] }),
      baseline_top_functions: profiles.baseline!.top[stage] ?? [],
    }))
    .sort((a, b) => b.gateway_us - a.gateway_us);
  const output = {
    benchmark: 'gateway cost ledger: POST /v1/availability, 50 items, app.inject (bench/gateway/ledger.ts)',
    command: `${COMPARE === undefined ? '' : `LEDGER_COMPARE=${COMPARE} `}${process.env.LEDGER_COMPARE_SETTINGS === undefined ? '' : `LEDGER_COMPARE_SETTINGS='${process.env.LEDGER_COMPARE_SETTINGS}' `}npm run bench:gateway -- --ledger`,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    load_average: loads,
    setup: {
      requests: `${REQUESTS} per app and round, ${CONCURRENCY} in flight, ${ROUNDS} rounds alternating after ${WARMUP} warm-up requests each; medians`,
      node_flags: process.execArgv.join(' '),
      profile: `V8 sampling profiler, ${SAMPLING_US} µs interval, ${REQUESTS} requests per profiled app`,
      compare:
        COMPARE === undefined
          ? null
          : `a second gateway built from ${COMPARE}/dist in the same process, settings ${JSON.stringify(COMPARE_SETTINGS)}`,
    },
    cpu_us_per_request: cpu,
    rounds,
    allocated_kb_per_request: Object.fromEntries(
      names.map((name) => [name, round2(allocated[name]! / 1024)]),
    ),
    ratio_gateway_over_baseline: ratio('gateway', 'baseline'),
    ratio_floor_over_baseline: ratio('floor', 'baseline'),
    ...(other === undefined
      ? {}
      : {
          ratio_compare_over_baseline: ratio('compare', 'baseline'),
          ratio_gateway_over_compare: ratio('gateway', 'compare'),
          ratio_gateway_over_compare_quartiles: quartiles('gateway', 'compare'),
        }),
    stages: table,
  };
  printLedger(output);
  process.send?.({ ledger: output });
  await baseline.close();
  await floor.close();
  await server.close();
  await other?.server.close();
}

async function profileStages(work: () => Promise<void>): Promise<StageProfile> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_US });
  await session.post('Profiler.start');
  await work();
  const { profile } = (await session.post('Profiler.stop')) as { profile: { nodes: CpuProfileNode[] } };
  session.disconnect();
  return cpuProfileStages(profile);
}

function printLedger(output: {
  cpu_us_per_request: Partial<Record<Name, number>>;
  ratio_gateway_over_baseline: number;
  ratio_gateway_over_compare?: number;
  ratio_gateway_over_compare_quartiles?: number[];
  ratio_compare_over_baseline?: number;
  load_average: number[];
  allocated_kb_per_request: Partial<Record<Name, number>>;
  stages: {
    stage: string;
    gateway_us: number;
    gateway_percent: number;
    compare_us?: number;
    baseline_us: number;
    added_us: number;
    gateway_kb: number;
    compare_kb?: number;
    baseline_kb: number;
    top_functions: string[];
    top_allocating_functions: string[];
  }[];
}): void {
  const { cpu_us_per_request: cpu } = output;
  const compared = cpu.compare !== undefined;
  console.log('');
  console.log(
    `CPU per request through app.inject: gateway ${cpu.gateway} µs, ${compared ? `compared gateway ${cpu.compare} µs, ` : ''}baseline ${cpu.baseline} µs, decode-only ${cpu.floor} µs; gateway ÷ baseline ${output.ratio_gateway_over_baseline}×${compared ? `, compared ÷ baseline ${output.ratio_compare_over_baseline}×, gateway ÷ compared ${output.ratio_gateway_over_compare}× (quartiles ${output.ratio_gateway_over_compare_quartiles?.join('–')})` : ''} (medians of the rounds' ratios); load average ${output.load_average.join(' / ')}`,
  );
  const kb = output.allocated_kb_per_request;
  console.log(
    `Allocated on V8's heap per request: gateway ${kb.gateway} KB, ${compared ? `compared gateway ${kb.compare} KB, ` : ''}baseline ${kb.baseline} KB, decode-only ${kb.floor} KB`,
  );
  const width = Math.max(...output.stages.map((s) => s.stage.length));
  const cell = (value: number, size: number) => value.toFixed(1).padStart(size);
  console.log(
    `${'stage'.padEnd(width)}  gateway µs   share${compared ? '  compared µs' : ''}  baseline µs  added µs  gateway KB${compared ? '  compared KB' : ''}  baseline KB`,
  );
  for (const s of output.stages) {
    console.log(
      `${s.stage.padEnd(width)}  ${cell(s.gateway_us, 10)}  ${cell(s.gateway_percent, 5)} %${compared ? `  ${cell(s.compare_us ?? 0, 11)}` : ''}  ${cell(s.baseline_us, 11)}  ${cell(s.added_us, 8)}  ${cell(s.gateway_kb, 10)}${compared ? `  ${cell(s.compare_kb ?? 0, 11)}` : ''}  ${cell(s.baseline_kb, 11)}`,
    );
    if (process.env.LEDGER_DETAIL !== '1') continue;
    for (const f of s.top_functions) console.log(`    CPU ${f}`);
    for (const f of s.top_allocating_functions) console.log(`    heap ${f}`);
  }
}

const round2 = (value: number) => Math.round(value * 100) / 100;

if (process.argv[1]?.endsWith(`ledger${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`)) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
