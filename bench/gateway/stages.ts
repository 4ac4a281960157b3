/**
 * The stages of a gateway request, for the cost ledger (ledger.ts): which stage a frame of a CPU or
 * allocation profile belongs to, by the file it runs in (or, for generated code without a file, its
 * name). The innermost frame on the stack that a rule claims decides; node's own modules and V8
 * built-ins are passed over, so `JSON.stringify` inside a log line counts as logging.
 */

export interface Frame {
  callFrame: { functionName: string; url: string };
}

/** Functions listed per stage (with the most samples or bytes of their own). */
const TOP_FUNCTIONS = Number(process.env.LEDGER_TOP ?? 10);

/** A profile added up per stage: each stage's share, and the functions that weigh most in it. */
export interface StageProfile {
  /** Each stage's share of the profile's weight (CPU samples or bytes). */
  shares: Record<string, number>;
  /** Per stage, the heaviest functions: `name file:line share%` (share of the whole profile). */
  top: Record<string, string[]>;
}

/** Adds up a profile's leaf frames, weighed by samples or bytes, per stage and function. */
export function stageTally<F extends Frame & { callFrame: { lineNumber: number } }>(
  parentOf: (node: F) => F | undefined,
) {
  const weights: Record<string, number> = {};
  const byFunction: Record<string, Map<string, number>> = {};
  let total = 0;
  return {
    add(leaf: F, weight: number): void {
      const stage = stageOf(leaf, parentOf);
      weights[stage] = (weights[stage] ?? 0) + weight;
      total += weight;
      const { functionName, url, lineNumber } = leaf.callFrame;
      const where = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${lineNumber + 1}`;
      const functions = byFunction[stage] ?? new Map<string, number>();
      byFunction[stage] = functions;
      functions.set(where, (functions.get(where) ?? 0) + weight);
    },
    result(): StageProfile {
      return {
        shares: Object.fromEntries(Object.entries(weights).map(([stage, w]) => [stage, w / total])),
        top: Object.fromEntries(
          Object.entries(byFunction).map(([stage, functions]) => [
            stage,
            [...functions]
              .sort((a, b) => b[1] - a[1])
              .slice(0, TOP_FUNCTIONS)
              .map(([where, w]) => `${where} ${((w / total) * 100).toFixed(1)}%`),
          ]),
        ),
      };
    },
  };
}

/** A node of a V8 CPU profile (`Profiler.stop`, or a `--cpu-prof` file). */
export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** A V8 CPU profile's samples added up per stage (idle time left out). */
export function cpuProfileStages(profile: { nodes: CpuProfileNode[] }): StageProfile {
  const parent = new Map<number, CpuProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const tally = stageTally<CpuProfileNode>((child) => parent.get(child.id));
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits > 0 && node.callFrame.functionName !== '(idle)') tally.add(node, hits);
  }
  return tally.result();
}

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
    // answer-bytes turns the serializer's string into the bytes sent: the string's flattening is paid there.
    files: /\/(?:src|dist)\/http\/(serializer|answer-bytes)|fast-json-stringify/,
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

/** The stage of a profile's leaf frame; `parentOf` walks up its stack. */
function stageOf<F extends Frame>(leaf: F, parentOf: (node: F) => F | undefined): string {
  if (leaf.callFrame.functionName === '(garbage collector)') return GC;
  for (let node: F | undefined = leaf; node !== undefined; node = parentOf(node)) {
    const { url, functionName } = node.callFrame;
    const rule = STAGES.find((r) =>
      url === '' ? r.names?.test(functionName) === true : !url.startsWith('node:') && r.files.test(url),
    );
    if (rule === undefined) continue;
    if (rule.stage !== DECODE) return rule.stage;
    // The operation modules encode and decode: which one, the stack above says.
    for (let up: F | undefined = node; up !== undefined; up = parentOf(up))
      if (ENCODER_FRAME.test(up.callFrame.functionName) && /\/(?:src|dist)\/msv3\//.test(up.callFrame.url))
        return ENCODE;
    return DECODE;
  }
  return OTHER;
}
