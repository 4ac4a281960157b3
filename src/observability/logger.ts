import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

/**
 * Keys whose values never reach a log line, at the top level and up to four objects (or arrays) deep
 * (REDACT_PATHS). Headers included: X-API-Key, Authorization, the MSV3 headers (X-MSV3-Credentials included); the MSV3 user
 * name is the customer's account number at the wholesaler and half of a credential pair, so it is
 * redacted too (the gateway account id identifies the caller in logs). Add new secret names here.
 */
const SECRET_KEYS = [
  'password',
  'credentials',
  'authorization',
  'cookie',
  'x-api-key',
  'x-msv3-password',
  'x-msv3-username',
  'x-msv3-credentials',
  'apiKey',
  'api_key',
  'secret',
  'signingSecret',
  'signing_secret',
] as const;

const MAX_DEPTH = 4;
const CENSOR = '[REDACTED]';
const SECRETS: ReadonlySet<string> = new Set(SECRET_KEYS);

/**
 * The paths the redaction covers, in pino's path syntax (`password`, `*.password`, … four wildcards
 * deep). Kept as the statement of what is redacted; `redactSecrets` implements it in one walk.
 */
export const REDACT_PATHS: string[] = SECRET_KEYS.flatMap((key) => {
  const segment = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  return Array.from({ length: MAX_DEPTH + 1 }, (_, depth) => {
    const prefix = '*.'.repeat(depth);
    return segment.startsWith('[') ? `${prefix.slice(0, -1)}${segment}` : `${prefix}${segment}`;
  });
});

/**
 * `value` with every SECRET_KEYS property at the top level and up to four objects (or arrays) deep
 * replaced by `[REDACTED]`, exactly the paths of REDACT_PATHS. Copy-on-write: the caller's objects are
 * never changed, and an object without secrets is returned as it is (no allocation). One walk with a set
 * lookup per key; pino's own `redact` with these 60 wildcard paths cost ~85 µs per log line.
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  let copy: Record<string, unknown> | undefined;
  const source = value as Record<string, unknown>;
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const current = source[key];
    let next = current;
    if (SECRETS.has(key)) next = current === undefined ? current : CENSOR;
    else if (depth < MAX_DEPTH && typeof current === 'object' && current !== null)
      next = redactSecrets(current, depth + 1);
    if (next !== current) {
      copy ??= (
        Array.isArray(value)
          ? value.slice()
          : Object.assign(Object.create(Object.getPrototypeOf(value)), value)
      ) as Record<string, unknown>;
      copy[key] = next;
    }
  }
  return (copy ?? value) as T;
}

/**
 * Query parameters whose name looks like a secret (`password`, `api_key`, `token`, …): no route takes
 * one, but a caller may still send it, and the request line is logged.
 */
const SECRET_QUERY_NAME = /pass|pwd|secret|token|key|auth|credential|signature/i;

/** `url` with the values of secret-looking query parameters replaced by `[REDACTED]`. */
export function redactQuery(url: string | undefined): string | undefined {
  const start = url === undefined ? -1 : url.indexOf('?');
  if (start === -1 || !SECRET_QUERY_NAME.test(url!.slice(start + 1))) return url;
  const pairs = url!
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return equals !== -1 && SECRET_QUERY_NAME.test(decodedName(name)) ? `${name}=${CENSOR}` : pair;
    });
  return `${url!.slice(0, start + 1)}${pairs.join('&')}`;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/**
 * Values our serializers produced. pino applies `serializers` after `formatters.log` (and Fastify's
 * request loggers inherit them), so a value serialized and redacted in `formatLogObject` must pass the
 * second application unchanged. `req` and `res` (one of each per request) come out as instances of
 * the classes below, recognised by their prototype (redaction's copies keep it) and written by JSON
 * like plain objects; other values (`err`) are remembered in a WeakSet.
 */
const serializedValues = new WeakSet<object>();

class LoggedRequest {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly route: string | undefined;
  readonly remote_address: string | undefined;

  constructor(request: { method?: string; url?: string; ip?: string; routeOptions?: { url?: string } }) {
    this.method = request.method;
    this.url = redactQuery(request.url);
    this.route = request.routeOptions?.url;
    this.remote_address = request.ip;
  }
}

class LoggedReply {
  readonly status: number | undefined;

  constructor(reply: { statusCode?: number }) {
    this.status = reply.statusCode;
  }
}

function markSerialized<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !isSerializedInstance(value))
    serializedValues.add(value);
  return value;
}

function isSerializedInstance(value: object): boolean {
  return value instanceof LoggedRequest || value instanceof LoggedReply;
}

function once<T>(serialize: (value: T) => unknown): (value: T) => unknown {
  return (value) =>
    typeof value === 'object' &&
    value !== null &&
    (isSerializedInstance(value) || serializedValues.has(value))
      ? value
      : serialize(value);
}

// biome-ignore lint/suspicious/noExplicitAny: pino's SerializerFn takes any
const serializers: Record<string, (value: any) => unknown> = {
  req: once(
    (request: { method?: string; url?: string; ip?: string; routeOptions?: { url?: string } }) =>
      new LoggedRequest(request),
  ),
  res: once((reply: { statusCode?: number }) => new LoggedReply(reply)),
  err: once(pino.stdSerializers.err),
};

/**
 * pino's `serializers` + `redact`, as one log formatter: serialize `req`, `res` and `err`, then redact
 * the result (so serializer output is covered, as with pino's redaction).
 */
function formatLogObject(object: Record<string, unknown>): Record<string, unknown> {
  let out = object;
  for (const key in serializers) {
    const value = object[key];
    if (value === undefined || !Object.hasOwn(object, key)) continue;
    if (out === object) out = { ...object };
    out[key] = serializers[key]!(value);
  }
  const redacted = redactSecrets(out);
  if (out !== object) for (const key in serializers) markSerialized(redacted[key]);
  return redacted;
}

export interface CreateLoggerOptions {
  level: LoggerOptions['level'];
  /** Where lines go; stdout by default. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
  /** Fields on every line besides `service`: a cluster worker's `worker` and `pid` (src/cluster/). */
  base?: Record<string, string | number>;
}

/**
 * Standard output, written synchronously: each line is one write(2) on the main thread when it is logged,
 * as Node writes its own standard output to files and pipes on Linux. pino's default hands each line to
 * libuv's thread pool instead: a wake-up of a pool thread and a completion signal back per request, which
 * cost about 7 % of the gateway's CPU per request, and lines still buffered die with a killed process.
 * A line of at most 4,096 bytes goes into a pipe in one piece, so cluster workers sharing one do not
 * interleave their lines.
 * The price is the same as for any synchronous writer: a log reader that stops reading holds the gateway
 * up (docs/observability.md).
 */
function standardOutput(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

/** The process's pino logger: JSON lines, secrets redacted, requests logged without headers. */
export function createLogger(options: CreateLoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'msv3-gateway', ...options.base },
      timestamp: isoTimeField(),
      serializers,
      // Every logged object: serialized and redacted to REDACT_PATHS depth in one walk.
      formatters: { log: formatLogObject },
      // pino's own redaction only for the top-level keys (cheap without wildcards): it also covers the
      // bindings of child loggers (Fastify's request loggers bind only `request_id`).
      redact: { paths: REDACT_PATHS.filter((path) => !path.startsWith('*')), censor: CENSOR },
    },
    options.destination ?? standardOutput(),
  );
}

/**
 * pino's `isoTime` (`,"time":"2026-11-29T17:05:12.345Z"`), the date and time formatted once per second:
 * `Date#toISOString` on every line took a seventh of the log line's instructions (docs/performance.md
 * "Smaller steps").
 */
export function isoTimeField(now: () => number = Date.now): () => string {
  let second = Number.NaN;
  let head = '';
  return () => {
    const ms = Math.floor(now());
    const s = Math.floor(ms / 1000);
    if (s !== second) {
      second = s;
      const iso = new Date(s * 1000).toISOString();
      // Years before 0 or after 9999 are written with a sign and six digits: formatted whole below.
      head = iso.length === 24 ? `,"time":"${iso.slice(0, 20)}` : '';
    }
    if (head === '') return `,"time":"${new Date(ms).toISOString()}"`;
    const milli = ms - s * 1000;
    return `${head}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z"`;
  };
}
