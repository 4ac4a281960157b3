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
 * Writes bench/results/gateway-ledger.json.
 * argv: the upstream base URL (…/msv3/v2.0), the gateway's work folder.
 */
import { Session } from 'node:inspector/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { va50Articles } from '../codec/envelopes.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import { buildBaselineApp } from './baseline-app.js';
import { boundedSetting, median, UPSTREAM_CONNECTIONS } from './harness.js';

const REQUESTS = boundedSetting('LEDGER_REQUESTS', 20_000, 100, 1_000_000);
const ROUNDS = boundedSetting('LEDGER_ROUNDS', 3, 1, 9);
const CONCURRENCY = boundedSetting('LEDGER_CONCURRENCY', 16, 1, 256);
const WARMUP = Math.min(5_000, REQUESTS);
/** Functions listed per stage (with the most samples of their own). */
const TOP_FUNCTIONS = 10;
/** The profiler's sampling interval, µs. */
const SAMPLING_US = 50;

const ENCODE = 'SOAP encode';
const DECODE = 'SOAP decode';
/** A frame of the encoder: the operations' helpers serve both ways, the caller decides. */
const ENCODER_FRAME = /^encode/;

/** Stages in the order of a request; the first rule that matches a frame's URL (or name) claims it. */
const STAGES: readonly { stage: string; files: RegExp; names?: RegExp }[] = [
  { stage: 'inject (the harness; no production cost)', files: /\/light-my-request\// },
  {
    stage: 'request id, shutdown check, notes',
    files: /\/(?:src|dist)\/(http\/(request-id|lifecycle|request-notes)|lib\/ids)\./,
  },
  {
    stage: 'tracing (off: hooks only)',
    files: /\/(?:src|dist)\/(http\/tracing|observability\/tracing)|@opentelemetry/,
  },
  {
    stage: 'auth (API key, cached)',
    files: /\/(?:src|dist)\/(http\/(auth|api-key-cache|auth-failures)|store\/api-key)/,
  },
  { stage: 'rate limit', files: /\/(?:src|dist)\/(http\/rate-limit|ratelimit\/)|rate-limiter-flexible/ },
  {
    stage: 'body parse',
    files: /\/(?:src|dist)\/http\/(json-body|nul-characters|json-error-position)|secure-json-parse/,
  },
  {
    stage: 'validation (body, headers, defaults)',
    files: /\/(?:src|dist)\/http\/(validation|schema-defaults)|\/ajv\/|\/typebox\//,
    // Ajv's compiled validators have no URL.
    names: /^validate\d*$/,
  },
  { stage: 'idempotency hook', files: /\/(?:src|dist)\/http\/idempotency/ },
  { stage: 'credentials', files: /\/(?:src|dist)\/(http\/msv3-credentials|msv3\/credentials)/ },
  { stage: ENCODE, files: /\/(?:src|dist)\/msv3\/xml\/write\./ },
  {
    stage: DECODE,
    files:
      /\/(?:src|dist)\/msv3\/(xml\/|operations\/|envelope|deviations|model)|\/(?:src|dist)\/wholesalers\/answer-deviations/,
  },
  {
    stage: 'transport (undici, breaker, cap, call)',
    files:
      /\/(?:src|dist)\/msv3\/(transport|breaker|concurrency|client)|\/(?:src|dist)\/wholesalers\/|\/undici\//,
  },
  { stage: 'mapping to JSON (service)', files: /\/(?:src|dist)\/(services\/|lib\/local-date-time|core\/)/ },
  { stage: 'serialisation', files: /\/(?:src|dist)\/http\/serializer|fast-json-stringify/ },
  {
    stage: 'metrics',
    files:
      /prom-client|\/(?:src|dist)\/observability\/(metrics|wholesaler-metrics|call-history|dependency-metrics)/,
  },
  {
    stage: 'logging',
    files:
      /\/pino\/|\/pino-std-serializers\/|sonic-boom|thread-stream|\/(?:src|dist)\/(observability\/logger|http\/observe)/,
  },
  {
    stage: 'error handling, routes table',
    files: /\/(?:src|dist)\/http\/(error-handler|route-errors|method-not-allowed)/,
  },
  {
    stage: 'Fastify itself',
    files:
      /\/(fastify|find-my-way|avvio|fast-querystring|@fastify\/[^/]+|fast-content-type-parse|toad-cache|process-warning|abstract-logging|fast-decode-uri-component|content-type|proxy-addr|forwarded|ipaddr\.js|rfdc)\//,
  },
];
const GC = 'garbage collection';
const OTHER = 'node, promise jobs, timers (no stage on the stack)';

type App = { inject: (options: object) => Promise<{ statusCode: number; body: string }> };

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** The built gateway (`dist/`), as `npm start` runs it. */
const fromDist = <T>(module: string) =>
  import(pathToFileURL(join(process.cwd(), 'dist', module)).href) as Promise<T>;

async function main(): Promise<void> {
  const { loadConfig } = await fromDist<typeof import('../../src/config.js')>('config.js');
  const { createLogger } =
    await fromDist<typeof import('../../src/observability/logger.js')>('observability/logger.js');
  const { startServer } = await fromDist<typeof import('../../src/server.js')>('server.js');
  const [upstreamBase, folder] = process.argv.slice(2) as [string, string];
  const env = benchGatewayEnv({
    folder,
    upstream: { baseUrl: upstreamBase, name: 'Canned upstream' },
    databaseFile: 'ledger.db',
    settings: { RATE_LIMIT_LIVE_POINTS: '1000000', RATE_LIMIT_TEST_POINTS: '1000000' },
  });
  const key = createLiveKey(env, 'ledger');
  const config = loadConfig(env);
  // As `npm start` logs: one JSON line per request, here written to /dev/null synchronously.
  const logger = createLogger({
    level: 'info',
    destination: pino.destination({ dest: '/dev/null', sync: true }),
  });
  const server = await startServer({ config, logger, summary: false });
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
    payload: JSON.stringify({
      wholesaler: 'bench',
      items: va50Articles().map((article, i) => ({
        pzn: article.pzn.padStart(8, '0'),
        quantity: article.quantity,
        demand_type: ['direct', 'unspecified', 'one_of_many'][i % 3],
      })),
    }),
  };
  const first = await (server.app as unknown as App).inject(request);
  if (first.statusCode !== 200) throw new Error(`the gateway answered ${first.statusCode} ${first.body}`);
  baseline.setAnswer(first.body);
  floor.setAnswer(first.body);
  const apps: Record<'gateway' | 'baseline' | 'floor', App> = {
    gateway: server.app as unknown as App,
    baseline: baseline.app as unknown as App,
    floor: floor.app as unknown as App,
  };
  for (const [name, app] of Object.entries(apps)) {
    const answer = await app.inject(request);
    if (answer.body !== first.body) throw new Error(`${name} does not answer the gateway's bytes`);
  }

  const drive = async (app: App, count: number) => {
    let left = count;
    const worker = async () => {
      while (left > 0) {
        left -= 1;
        const answer = await app.inject(request);
        if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}: ${answer.body}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  const cpuPerRequest = async (app: App) => {
    const before = process.cpuUsage();
    await drive(app, REQUESTS);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / REQUESTS;
  };

  console.log(`[ledger] warm-up: ${WARMUP} requests each`);
  for (const app of Object.values(apps)) await drive(app, WARMUP);
  const loads: number[] = [];
  const rounds: Record<keyof typeof apps, number[]> = { gateway: [], baseline: [], floor: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    loads.push(round2(loadavg()[0]!));
    const order = (
      round % 2 === 1 ? ['gateway', 'baseline', 'floor'] : ['floor', 'baseline', 'gateway']
    ) as (keyof typeof apps)[];
    for (const name of order) {
      const us = await cpuPerRequest(apps[name]);
      rounds[name].push(round2(us));
      console.log(`[ledger] round ${round} ${name.padEnd(8)} ${us.toFixed(1)} µs CPU per request`);
    }
  }
  const cpu = {
    gateway: median(rounds.gateway),
    baseline: median(rounds.baseline),
    floor: median(rounds.floor),
  };

  const profiles = {} as Record<keyof typeof apps, Profiled>;
  for (const name of ['gateway', 'baseline'] as const) {
    console.log(`[ledger] profiling ${name}: ${REQUESTS} requests, a sample every ${SAMPLING_US} µs`);
    loads.push(round2(loadavg()[0]!));
    profiles[name] = await profileStages(() => drive(apps[name], REQUESTS));
  }
  const stages = [
    ...new Set([...Object.keys(profiles.gateway.shares), ...Object.keys(profiles.baseline.shares)]),
  ];
  const table = stages
    .map((stage) => {
      const gateway = (profiles.gateway.shares[stage] ?? 0) * cpu.gateway;
      const base = (profiles.baseline.shares[stage] ?? 0) * cpu.baseline;
      return {
        stage,
        gateway_us: round2(gateway),
        gateway_percent: round2((profiles.gateway.shares[stage] ?? 0) * 100),
        baseline_us: round2(base),
        added_us: round2(gateway - base),
        top_functions: profiles.gateway.top[stage] ?? [],
      };
    })
    .sort((a, b) => b.gateway_us - a.gateway_us);
  const output = {
    benchmark: 'gateway cost ledger: POST /v1/availability, 50 items, app.inject (bench/gateway/ledger.ts)',
    command: 'npm run bench:gateway -- --ledger',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    load_average: loads,
    setup: {
      requests: `${REQUESTS} per app and round, ${CONCURRENCY} in flight, ${ROUNDS} rounds alternating after ${WARMUP} warm-up requests each; medians`,
      node_flags: process.execArgv.join(' '),
      profile: `V8 sampling profiler, ${SAMPLING_US} µs interval, ${REQUESTS} gateway requests`,
    },
    cpu_us_per_request: cpu,
    rounds,
    ratio_gateway_over_baseline: round2(cpu.gateway / cpu.baseline),
    ratio_floor_over_baseline: round2(cpu.floor / cpu.baseline),
    stages: table,
  };
  printLedger(output);
  process.send?.({ ledger: output });
  await baseline.close();
  await floor.close();
  await server.close();
}

interface Profiled {
  /** Share of the profiled CPU samples per stage (idle time left out). */
  shares: Record<string, number>;
  /** Per stage, the functions with the most samples of their own: `name file:line share%`. */
  top: Record<string, string[]>;
}

async function profileStages(work: () => Promise<void>): Promise<Profiled> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_US });
  await session.post('Profiler.start');
  await work();
  const { profile } = (await session.post('Profiler.stop')) as { profile: { nodes: ProfileNode[] } };
  session.disconnect();

  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const counts: Record<string, number> = {};
  const byFunction: Record<string, Map<string, number>> = {};
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0 || node.callFrame.functionName === '(idle)') continue;
    const stage = stageOf(node, parent);
    counts[stage] = (counts[stage] ?? 0) + hits;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${lineNumber + 1}`;
    const functions = byFunction[stage] ?? new Map<string, number>();
    byFunction[stage] = functions;
    functions.set(where, (functions.get(where) ?? 0) + hits);
  }
  const top = Object.fromEntries(
    Object.entries(byFunction).map(([stage, functions]) => [
      stage,
      [...functions]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP_FUNCTIONS)
        .map(([where, hits]) => `${where} ${((hits / total) * 100).toFixed(1)}%`),
    ]),
  );
  return {
    shares: Object.fromEntries(Object.entries(counts).map(([stage, hits]) => [stage, hits / total])),
    top,
  };
}

function stageOf(leaf: ProfileNode, parent: Map<number, ProfileNode>): string {
  if (leaf.callFrame.functionName === '(garbage collector)') return GC;
  for (let node: ProfileNode | undefined = leaf; node !== undefined; node = parent.get(node.id)) {
    const { url, functionName } = node.callFrame;
    const rule = STAGES.find((r) =>
      url === '' ? r.names?.test(functionName) === true : !url.startsWith('node:') && r.files.test(url),
    );
    if (rule === undefined) continue;
    if (rule.stage !== DECODE) return rule.stage;
    // The operation modules encode and decode: which one, the stack above says.
    for (let up: ProfileNode | undefined = node; up !== undefined; up = parent.get(up.id))
      if (ENCODER_FRAME.test(up.callFrame.functionName) && /\/(?:src|dist)\/msv3\//.test(up.callFrame.url))
        return ENCODE;
    return DECODE;
  }
  return OTHER;
}

function printLedger(output: {
  cpu_us_per_request: Record<string, number>;
  ratio_gateway_over_baseline: number;
  load_average: number[];
  stages: {
    stage: string;
    gateway_us: number;
    gateway_percent: number;
    baseline_us: number;
    added_us: number;
    top_functions: string[];
  }[];
}): void {
  const { cpu_us_per_request: cpu } = output;
  console.log('');
  console.log(
    `CPU per request through app.inject: gateway ${cpu.gateway} µs, baseline ${cpu.baseline} µs, decode-only ${cpu.floor} µs; gateway ÷ baseline ${output.ratio_gateway_over_baseline}×; load average ${output.load_average.join(' / ')}`,
  );
  const width = Math.max(...output.stages.map((s) => s.stage.length));
  console.log(`${'stage'.padEnd(width)}  gateway µs   share  baseline µs  added µs`);
  for (const s of output.stages) {
    console.log(
      `${s.stage.padEnd(width)}  ${s.gateway_us.toFixed(1).padStart(10)}  ${s.gateway_percent.toFixed(1).padStart(5)} %  ${s.baseline_us.toFixed(1).padStart(11)}  ${s.added_us.toFixed(1).padStart(8)}`,
    );
    if (process.env.LEDGER_DETAIL === '1') for (const f of s.top_functions) console.log(`    ${f}`);
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
