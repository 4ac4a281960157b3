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
import { va50Articles } from '../codec/envelopes.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import { buildBaselineApp } from './baseline-app.js';
import { boundedSetting, median, UPSTREAM_CONNECTIONS } from './harness.js';

const REQUESTS = boundedSetting('LEDGER_REQUESTS', 20_000, 100, 1_000_000);
const ROUNDS = boundedSetting('LEDGER_ROUNDS', 3, 1, 9);
const CONCURRENCY = boundedSetting('LEDGER_CONCURRENCY', 16, 1, 256);
const WARMUP = Math.min(5_000, REQUESTS);
/** Another checkout (its `dist/` built): its gateway runs beside this one, for a before/after in one process. */
const COMPARE = process.env.LEDGER_COMPARE;
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
  {
    stage: 'serialisation',
    files: /\/(?:src|dist)\/http\/serializer|fast-json-stringify/,
    // The functions http/serializer.ts generates (`f0`, `f1`, …) have no URL.
    names: /^f\d+$/,
  },
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

/**
 * A gateway built from `root`'s `dist/` (as `npm start` runs it), with its own SQLite database in
 * `folder` and a live key made with that checkout's CLI.
 */
async function startGatewayFrom(root: string, folder: string, upstreamBase: string, name: string) {
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
    settings: { RATE_LIMIT_LIVE_POINTS: '1000000', RATE_LIMIT_TEST_POINTS: '1000000' },
  });
  const key = createLiveKey(env, 'ledger', join(root, 'dist', 'cli.js'));
  // As `npm start` logs: one JSON line per request, here written to /dev/null synchronously.
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
    COMPARE === undefined ? undefined : await startGatewayFrom(COMPARE, folder, upstreamBase, 'compare');
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
  const headersOf = (secret: string) => ({ ...request.headers, 'x-api-key': secret });
  if (first.statusCode !== 200) throw new Error(`the gateway answered ${first.statusCode} ${first.body}`);
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
  const ratio = (a: Name, b: Name) => round2(median(rounds[a]!.map((value, i) => value / rounds[b]![i]!)));

  const profiled = names.filter((name) => name !== 'floor');
  const profiles: Partial<Record<Name, Profiled>> = {};
  for (const name of profiled) {
    console.log(`[ledger] profiling ${name}: ${REQUESTS} requests, a sample every ${SAMPLING_US} µs`);
    loads.push(round2(loadavg()[0]!));
    profiles[name] = await profileStages(() => drive(name, REQUESTS));
  }
  const stages = [...new Set(profiled.flatMap((name) => Object.keys(profiles[name]!.shares)))];
  const usOf = (name: Name, stage: string) => round2((profiles[name]?.shares[stage] ?? 0) * cpu[name]!);
  const table = stages
    .map((stage) => ({
      stage,
      gateway_us: usOf('gateway', stage),
      gateway_percent: round2((profiles.gateway!.shares[stage] ?? 0) * 100),
      ...(other === undefined ? {} : { compare_us: usOf('compare', stage) }),
      baseline_us: usOf('baseline', stage),
      added_us: round2(usOf('gateway', stage) - usOf('baseline', stage)),
      top_functions: profiles.gateway!.top[stage] ?? [],
      ...(other === undefined ? {} : { compare_top_functions: profiles.compare!.top[stage] ?? [] }),
      baseline_top_functions: profiles.baseline!.top[stage] ?? [],
    }))
    .sort((a, b) => b.gateway_us - a.gateway_us);
  const output = {
    benchmark: 'gateway cost ledger: POST /v1/availability, 50 items, app.inject (bench/gateway/ledger.ts)',
    command: `${COMPARE === undefined ? '' : `LEDGER_COMPARE=${COMPARE} `}npm run bench:gateway -- --ledger`,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    load_average: loads,
    setup: {
      requests: `${REQUESTS} per app and round, ${CONCURRENCY} in flight, ${ROUNDS} rounds alternating after ${WARMUP} warm-up requests each; medians`,
      node_flags: process.execArgv.join(' '),
      profile: `V8 sampling profiler, ${SAMPLING_US} µs interval, ${REQUESTS} requests per profiled app`,
      compare:
        COMPARE === undefined ? null : `a second gateway built from ${COMPARE}/dist in the same process`,
    },
    cpu_us_per_request: cpu,
    rounds,
    ratio_gateway_over_baseline: ratio('gateway', 'baseline'),
    ratio_floor_over_baseline: ratio('floor', 'baseline'),
    ...(other === undefined
      ? {}
      : {
          ratio_compare_over_baseline: ratio('compare', 'baseline'),
          ratio_gateway_over_compare: ratio('gateway', 'compare'),
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
  cpu_us_per_request: Partial<Record<Name, number>>;
  ratio_gateway_over_baseline: number;
  ratio_gateway_over_compare?: number;
  ratio_compare_over_baseline?: number;
  load_average: number[];
  stages: {
    stage: string;
    gateway_us: number;
    gateway_percent: number;
    compare_us?: number;
    baseline_us: number;
    added_us: number;
    top_functions: string[];
  }[];
}): void {
  const { cpu_us_per_request: cpu } = output;
  const compared = cpu.compare !== undefined;
  console.log('');
  console.log(
    `CPU per request through app.inject: gateway ${cpu.gateway} µs, ${compared ? `compared gateway ${cpu.compare} µs, ` : ''}baseline ${cpu.baseline} µs, decode-only ${cpu.floor} µs; gateway ÷ baseline ${output.ratio_gateway_over_baseline}×${compared ? `, compared ÷ baseline ${output.ratio_compare_over_baseline}×, gateway ÷ compared ${output.ratio_gateway_over_compare}×` : ''} (medians of the rounds' ratios); load average ${output.load_average.join(' / ')}`,
  );
  const width = Math.max(...output.stages.map((s) => s.stage.length));
  const cell = (value: number, size: number) => value.toFixed(1).padStart(size);
  console.log(
    `${'stage'.padEnd(width)}  gateway µs   share${compared ? '  compared µs' : ''}  baseline µs  added µs`,
  );
  for (const s of output.stages) {
    console.log(
      `${s.stage.padEnd(width)}  ${cell(s.gateway_us, 10)}  ${cell(s.gateway_percent, 5)} %${compared ? `  ${cell(s.compare_us ?? 0, 11)}` : ''}  ${cell(s.baseline_us, 11)}  ${cell(s.added_us, 8)}`,
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
