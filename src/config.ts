import { readFileSync } from 'node:fs';
import { type Static, type TSchema, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { parseCidr } from './lib/address-policy.js';
import { type MisspeltName, misspeltNames } from './lib/misspelt-names.js';

/** A pattern for OpenTelemetry's `key=value,key=value` lists (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES). */
function keyValueListPattern(key: string): string {
  const pair = `\\s*${key}\\s*=[^,]*`;
  return `${pair}(,${pair})*`;
}

/**
 * The one configuration schema. Each setting is a TypeBox schema inside a section and names its
 * environment variable in `env`; `default` and `description` feed the table of docs/configuration.md.
 * To add a setting: add a property with `env`, `default` (or wrap it in `Type.Optional`) and a
 * description. To add a section: add another `Type.Object` of such properties. Nothing else changes.
 */
const ConfigSchema = Type.Object({
  server: Type.Object({
    host: Type.String({
      env: 'HOST',
      default: '127.0.0.1',
      minLength: 1,
      description: 'Interface to listen on.',
    }),
    port: Type.Integer({
      env: 'PORT',
      default: 8080,
      minimum: 0,
      maximum: 65535,
      description: 'TCP port to listen on (0 picks a free port).',
    }),
    listenBacklog: Type.Integer({
      env: 'LISTEN_BACKLOG',
      default: 4096,
      minimum: 1,
      maximum: 65535,
      description:
        'Connections the kernel holds for the gateway to accept (the listen backlog, of PORT and HEALTH_PORT); the kernel caps it at net.core.somaxconn. When it is full, new connections are dropped and clients retry only after a second or more.',
    }),
    healthPort: Type.Optional(
      Type.Integer({
        env: 'HEALTH_PORT',
        minimum: 0,
        maximum: 65535,
        description:
          'A port of its own for the health probes (`GET /v1/health`, `GET /v1/health/ready`), answered by a thread of its own, so that probes are answered at once while the gateway is busy (docs/operating.md); unset: the probes are on PORT only (they stay there either way). Needs WORKERS=1.',
      }),
    ),
    bodyLimitBytes: Type.Integer({
      env: 'BODY_LIMIT_BYTES',
      default: 1_048_576,
      minimum: 1024,
      description: 'Largest accepted request body; larger bodies get 413.',
    }),
    requestTimeoutMs: Type.Integer({
      env: 'REQUEST_TIMEOUT_MS',
      default: 30_000,
      minimum: 1000,
      maximum: 600_000,
      description:
        'How long a client may take to send a whole request (headers and body); then 408 and the connection is closed.',
    }),
    shutdownTimeoutMs: Type.Integer({
      env: 'SHUTDOWN_TIMEOUT_MS',
      default: 10_000,
      minimum: 0,
      description:
        'How long in-flight requests may run after SIGTERM/SIGINT: wholesaler calls still open are stopped and answered (504) 0.5 s before it, connections still open are cut at it (docs/resilience.md).',
    }),
    workers: Type.Union([Type.Literal('auto'), Type.Integer({ minimum: 0, maximum: 256 })], {
      env: 'WORKERS',
      default: 1,
      hint: 'a whole number from 0 to 256, or auto',
      description:
        'Worker processes sharing the port (node:cluster, docs/operating.md); 1: one process as before; `auto` or 0: one per CPU core.',
    }),
  }),
  database: Type.Object({
    url: Type.String({
      env: 'DATABASE_URL',
      default: 'sqlite:./data/gateway.db',
      pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
      hint: 'sqlite:<file>, postgres://… or postgresql://…',
      secret: true,
      description: '`sqlite:<file>` (embedded, the folder is created) or `postgres://…` / `postgresql://…`.',
    }),
  }),
  redis: Type.Object({
    url: Type.Optional(
      Type.String({
        env: 'REDIS_URL',
        pattern: '^rediss?://.+',
        hint: 'redis://… or rediss://…',
        secret: true,
        description: 'Optional `redis://…`; when set, rate limits are shared through Redis.',
      }),
    ),
  }),
  log: Type.Object({
    level: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      env: 'LOG_LEVEL',
      default: 'info',
      description: 'pino log level.',
    }),
  }),
  startup: Type.Object({
    strictConfig: Type.Boolean({
      env: 'STRICT_CONFIG',
      default: false,
      description:
        'An environment variable that looks like a misspelt setting (`DATABSE_URL`) stops start-up and every command with exit code 1, instead of a warning naming the setting meant.',
    }),
  }),
  apiKeys: Type.Object({
    cacheTtlMs: Type.Integer({
      env: 'API_KEY_CACHE_TTL_MS',
      default: 5_000,
      minimum: 0,
      maximum: 60_000,
      description:
        'How long a process reuses an API key it looked up before asking the database again; a revoked key is refused within this time. 0: ask the database on every request.',
    }),
    createFirstKey: Type.Boolean({
      env: 'CREATE_FIRST_KEY',
      default: true,
      description:
        'On a start with no API key in the database, create an account and a pk_test_ key and print it once (stdout); false in production, where keys come from `keys create`.',
    }),
    failuresPerAddress: Type.Integer({
      env: 'API_KEY_FAILURES_PER_ADDRESS',
      default: 20,
      minimum: 1,
      description:
        'Unknown or revoked API keys one client address (an IPv6 /64) may present per window; then 429 rate_limited, and unknown keys are not looked up until the window ends.',
    }),
    failureWindowSeconds: Type.Integer({
      env: 'API_KEY_FAILURE_WINDOW_SECONDS',
      default: 60,
      minimum: 1,
      maximum: 86_400,
      description: 'Window for API_KEY_FAILURES_PER_ADDRESS, in seconds.',
    }),
  }),
  rateLimit: Type.Object({
    store: Type.Enum(['auto', 'memory', 'redis', 'database'], {
      env: 'RATE_LIMIT_STORE',
      default: 'auto',
      description:
        'Where request budgets are counted. `auto`: Redis if REDIS_URL is set, else the database if it is PostgreSQL, else memory.',
    }),
    testPoints: Type.Integer({
      env: 'RATE_LIMIT_TEST_POINTS',
      default: 25,
      minimum: 1,
      description: 'Requests per window for each `pk_test_` key.',
    }),
    testWindowSeconds: Type.Integer({
      env: 'RATE_LIMIT_TEST_WINDOW_SECONDS',
      default: 1,
      minimum: 1,
      description: 'Window length for test keys, in seconds.',
    }),
    livePoints: Type.Integer({
      env: 'RATE_LIMIT_LIVE_POINTS',
      default: 100,
      minimum: 1,
      description: 'Requests per window for each `pk_live_` key.',
    }),
    liveWindowSeconds: Type.Integer({
      env: 'RATE_LIMIT_LIVE_WINDOW_SECONDS',
      default: 1,
      minimum: 1,
      description: 'Window length for live keys, in seconds.',
    }),
  }),
  upstream: Type.Object({
    connectTimeoutMs: Type.Integer({
      env: 'UPSTREAM_CONNECT_TIMEOUT_MS',
      default: 5_000,
      minimum: 1,
      description: 'TCP/TLS connect timeout towards a wholesaler.',
    }),
    headersTimeoutMs: Type.Integer({
      env: 'UPSTREAM_HEADERS_TIMEOUT_MS',
      default: 30_000,
      minimum: 1,
      description: "Time allowed until the wholesaler's response headers arrive.",
    }),
    bodyTimeoutMs: Type.Integer({
      env: 'UPSTREAM_BODY_TIMEOUT_MS',
      default: 30_000,
      minimum: 1,
      description: 'Longest pause allowed between two chunks of a wholesaler response body.',
    }),
    totalTimeoutMs: Type.Integer({
      env: 'UPSTREAM_TOTAL_TIMEOUT_MS',
      default: 65_000,
      minimum: 1_000,
      maximum: 600_000,
      description:
        'Deadline for a whole wholesaler call, from sending the request (waiting for a free connection included) to the last byte of the answer; a call still running then ends with 504 wholesaler_timeout. At least UPSTREAM_CONNECT_TIMEOUT_MS + UPSTREAM_HEADERS_TIMEOUT_MS.',
    }),
    maxResponseBytes: Type.Integer({
      env: 'UPSTREAM_MAX_RESPONSE_BYTES',
      // MAX_READABLE_ANSWER_BYTES (src/msv3/answer-text.ts), written out: this layer does not import msv3.
      default: 12_582_912,
      minimum: 1024,
      description:
        'Largest wholesaler response read; a longer one is refused as soon as it passes this size (502 wholesaler_bad_response). 12 MiB, the default, is the most an answer can have that the MSV3 parser reads (4 Mi characters of at most three bytes each; the largest MSV3 answer, a 2 MiB PDF document, is under 3 MB); more only costs memory and time.',
    }),
    maxConcurrency: Type.Integer({
      env: 'UPSTREAM_MAX_CONCURRENCY',
      default: 16,
      minimum: 1,
      description:
        'Calls in progress at once to one wholesaler server (its origin: custom wholesalers several accounts registered at one URL share it), per gateway process, and the connections kept to it: the gateway\'s own limit, which protects the wholesaler (an MSV3 DenialOfServiceFault means it throttles). 16 is what a wholesaler\'s server is usually sized to accept from one client system and keeps about 8 calls/s flowing at 2 s per call; further calls wait in a fair queue per account (docs/resilience.md "Overload").',
    }),
    maxQueue: Type.Integer({
      env: 'UPSTREAM_MAX_QUEUE',
      default: 64,
      minimum: 0,
      description:
        'Calls that may wait for a free slot to one wholesaler endpoint (all accounts together); one more is refused with 503 gateway_busy (held up to UPSTREAM_REFUSAL_HOLD_MS) and a Retry-After from the queue ahead.',
    }),
    maxQueueWaitMs: Type.Integer({
      env: 'UPSTREAM_MAX_QUEUE_WAIT_MS',
      default: 5_000,
      minimum: 1,
      maximum: 600_000,
      description:
        'Longest wait for a free slot to a wholesaler endpoint; a call whose estimated wait (queue ahead / UPSTREAM_MAX_CONCURRENCY × mean call time) is longer is refused (held up to UPSTREAM_REFUSAL_HOLD_MS), one still waiting then is refused, both with 503 gateway_busy.',
    }),
    maxRefusalHoldMs: Type.Integer({
      env: 'UPSTREAM_REFUSAL_HOLD_MS',
      default: 5_000,
      minimum: 0,
      maximum: 600_000,
      description:
        "Longest time a 503 gateway_busy is held before it is sent: a call refused because the queue is full or too long is answered after the queue's estimated drain time, at most this long, with a Retry-After for the rest, so clients that retry at once retry at the pace the queue drains. 0 answers refusals at once.",
    }),
    breakerFailureThreshold: Type.Integer({
      env: 'BREAKER_FAILURE_THRESHOLD',
      default: 5,
      minimum: 1,
      description: 'Consecutive failures after which calls to a wholesaler are paused.',
    }),
    breakerCooldownMs: Type.Integer({
      env: 'BREAKER_COOLDOWN_MS',
      default: 30_000,
      minimum: 0,
      description: 'How long calls stay paused before one trial call is let through.',
    }),
  }),
  network: Type.Object({
    allowPrivateEndpoints: Type.Boolean({
      env: 'ALLOW_PRIVATE_ENDPOINTS',
      default: false,
      description:
        'Allow custom wholesaler and webhook URLs on every private and loopback address (plain http included); link-local and cloud metadata addresses stay refused.',
    }),
    allowedPrivateCidrs: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        env: 'ALLOWED_PRIVATE_CIDRS',
        description:
          'Comma-separated CIDR ranges (e.g. `10.20.0.0/16,::1/128`) of private addresses custom wholesaler and webhook URLs may use, plain http included, when ALLOW_PRIVATE_ENDPOINTS is off; link-local and cloud metadata addresses stay refused.',
      }),
    ),
  }),
  wholesalers: Type.Object({
    catalogueFile: Type.Optional(
      Type.String({
        env: 'WHOLESALER_CATALOGUE',
        minLength: 1,
        description:
          'JSON file listing the wholesaler ids, MSV3 versions and live/test URLs; unset: the shipped `config/wholesalers.json`.',
      }),
    ),
    clientSoftwareId: Type.Optional(
      Type.String({
        env: 'MSV3_CLIENT_SOFTWARE_ID',
        minLength: 1,
        maxLength: 80,
        description:
          'Sent to wholesalers as `clientSoftwareKennung` (1–80 characters); unset: `msv3-gateway <version>`.',
      }),
    ),
    sandboxUrl: Type.Optional(
      Type.String({
        env: 'SANDBOX_URL',
        pattern: '^https?://[^?#]+$',
        hint: 'an http(s) URL such as http://127.0.0.1:9090',
        description:
          'Origin of an external sandbox mock (`npx msv3-gateway mock`); unset: the built-in mock runs in-process on a random loopback port.',
      }),
    ),
    tolerateDeviations: Type.Boolean({
      env: 'MSV3_TOLERATE_DEVIATIONS',
      default: true,
      description:
        'Accept wholesaler answers with the schema deviations that leave them one meaning (a qualified `return`, `xsi:nil` without a declaration of `xsi` on a nillable element), each counted, logged once per wholesaler and listed by the connection test; `false` refuses them like any other deviation.',
    }),
    probeIntervalMs: Type.Integer({
      env: 'WHOLESALER_PROBE_INTERVAL_MS',
      default: 60_000,
      minimum: 0,
      description:
        'How often the wholesaler endpoints called in the last hour are probed without credentials, for `wholesaler.status_changed`; 0 turns the probes off (the circuit breakers still report), otherwise at least 1000.',
    }),
  }),
  mock: Type.Object({
    nightHours: Type.Optional(
      Type.String({
        env: 'MOCK_NIGHT_HOURS',
        pattern: '^\\s*([01]?\\d|2[0-3])\\s*-\\s*([01]?\\d|2[0-3])\\s*$',
        hint: 'local hours like 22-6',
        description:
          'Sandbox mock: local hours (Europe/Berlin) in which orders are taken in night mode, e.g. `22-6`; unset: never (the NIGHT_MODE scenario PZN still works).',
      }),
    ),
    nightOrderDelayMs: Type.Integer({
      env: 'MOCK_NIGHT_ORDER_DELAY_MS',
      default: 10_000,
      minimum: 0,
      maximum: 86_400_000,
      description: 'Sandbox mock: how long after placement a NIGHT_MODE-scenario order is processed.',
    }),
    slowAnswerMs: Type.Integer({
      env: 'MOCK_SLOW_ANSWER_MS',
      default: 2_000,
      minimum: 0,
      maximum: 60_000,
      description: 'Sandbox mock: delay of the SLOW_ANSWER scenario.',
    }),
    lateAnswerMs: Type.Integer({
      env: 'MOCK_LATE_ANSWER_MS',
      default: 35_000,
      minimum: 0,
      maximum: 300_000,
      description:
        'Sandbox mock: delay of the LATE_ANSWER scenario (meant to exceed UPSTREAM_HEADERS_TIMEOUT_MS).',
    }),
  }),
  orders: Type.Object({
    maxPositions: Type.Integer({
      env: 'ORDER_MAX_POSITIONS',
      default: 500,
      minimum: 1,
      maximum: 1000,
      description:
        'Most positions one order may have across its sub-orders, after repeated PZNs are merged (MSV3 allows 1,000; pharmacy software commonly sends at most 500).',
    }),
    contractCacheTtlMs: Type.Integer({
      env: 'ORDER_CONTRACT_CACHE_TTL_MS',
      default: 300_000,
      minimum: 0,
      maximum: 86_400_000,
      description:
        'How long the contract read to check an order (order types, free labels, complete containers) is reused for the same wholesaler, user name and password; 0: read it for every such order. Never stores the credentials (docs/orders.md).',
    }),
  }),
  idempotency: Type.Object({
    lockTimeoutMs: Type.Integer({
      env: 'IDEMPOTENCY_LOCK_TIMEOUT_MS',
      default: 60_000,
      minimum: 100,
      description:
        'How long an Idempotency-Key stays locked after its gateway process stops renewing it (a crash); then a retry with the key takes over and reconciles.',
    }),
    purgeIntervalMs: Type.Integer({
      env: 'IDEMPOTENCY_PURGE_INTERVAL_MS',
      default: 600_000,
      minimum: 1_000,
      description:
        'How often expired Idempotency-Key records (older than 24 hours) are deleted; a retry with an expired key starts a new request either way.',
    }),
  }),
  webhooks: Type.Object({
    workerEnabled: Type.Boolean({
      env: 'WEBHOOK_WORKER_ENABLED',
      default: true,
      description:
        'Run the webhook delivery worker in this process (several processes may share one PostgreSQL database).',
    }),
    pollIntervalMs: Type.Integer({
      env: 'WEBHOOK_POLL_INTERVAL_MS',
      default: 1_000,
      minimum: 10,
      description:
        'Longest pause between looks for due deliveries (new events wake the worker at once; this catches retries and other processes).',
    }),
    concurrency: Type.Integer({
      env: 'WEBHOOK_CONCURRENCY',
      default: 32,
      minimum: 1,
      maximum: 1024,
      description: 'Webhook delivery attempts in flight at once per process.',
    }),
    concurrencyPerSubscription: Type.Integer({
      env: 'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION',
      default: 4,
      minimum: 1,
      maximum: 1024,
      description:
        'Attempts in flight at once towards one subscription, so a slow receiver cannot hold every slot (exact per process; several processes may briefly exceed it together).',
    }),
    timeoutMs: Type.Integer({
      env: 'WEBHOOK_TIMEOUT_MS',
      default: 10_000,
      minimum: 100,
      maximum: 60_000,
      description: 'A delivery succeeds only with a 2xx answer within this time.',
    }),
    connectTimeoutMs: Type.Integer({
      env: 'WEBHOOK_CONNECT_TIMEOUT_MS',
      default: 5_000,
      minimum: 100,
      description: 'TCP/TLS connect timeout towards a webhook receiver.',
    }),
    leaseMs: Type.Integer({
      env: 'WEBHOOK_LEASE_MS',
      default: 60_000,
      minimum: 1_000,
      description:
        'How long a worker reserves a delivery it is sending; after a crash another worker takes it over after this. Must exceed WEBHOOK_TIMEOUT_MS.',
    }),
    retentionDays: Type.Integer({
      env: 'WEBHOOK_RETENTION_DAYS',
      default: 30,
      minimum: 1,
      description:
        'Events and delivery logs older than this are deleted (deliveries being retried are kept; deliveries of a paused subscription still waiting then are given up).',
    }),
    pruneIntervalMs: Type.Integer({
      env: 'WEBHOOK_PRUNE_INTERVAL_MS',
      default: 3_600_000,
      minimum: 1_000,
      description:
        'How often events and delivery logs older than WEBHOOK_RETENTION_DAYS are deleted, by each process that runs the webhook worker.',
    }),
  }),
  metrics: Type.Object({
    token: Type.Optional(
      Type.String({
        env: 'METRICS_TOKEN',
        minLength: 16,
        secret: true,
        description:
          'When set, `GET /metrics` needs `Authorization: Bearer <token>`; otherwise it is public.',
      }),
    ),
  }),
  statusPage: Type.Object({
    token: Type.Optional(
      Type.String({
        env: 'STATUS_PAGE_TOKEN',
        minLength: 16,
        secret: true,
        description:
          'When set, the operator status page answers at `GET /status` to this token (the password of HTTP Basic, any user name, or `Authorization: Bearer <token>`); unset: there is no status page.',
      }),
    ),
  }),
  // Benchmark and diagnostic switches: each turns one speed-up off so that `bench:gateway` can measure
  // what it saves in one run (docs/performance.md "Fast paths, measured"). Leave them on in production.
  fastPaths: Type.Object({
    decoding: Type.Boolean({
      env: 'FAST_PATH_DECODING',
      default: true,
      description:
        'Benchmark/diagnostic setting: `false` decodes every wholesaler answer with the general decoder, without the fast path for answers in their plain form.',
    }),
    serializer: Type.Boolean({
      env: 'FAST_PATH_SERIALIZER',
      default: true,
      description:
        "Benchmark/diagnostic setting: `false` serialises every JSON answer with Fastify's fast-json-stringify alone, without the generated serializer.",
    }),
  }),
  // The standard OpenTelemetry variables, read here and handed to the SDK explicitly (docs/tracing.md).
  tracing: Type.Object({
    endpoint: Type.Optional(
      Type.String({
        env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
        pattern: '^https?://[^\\s/?#@]+(/[^\\s?#]*)?$',
        hint: 'an http(s) URL without user name, query or fragment, such as http://127.0.0.1:4318',
        // A user name and password in the URL would be echoed by an error message otherwise.
        secret: true,
        description:
          'OTLP/HTTP collector (base URL): when set, traces go to `<url>/v1/traces` (OTLP JSON); unset: no tracing, the SDK is not even loaded (docs/tracing.md).',
      }),
    ),
    headers: Type.Optional(
      Type.String({
        env: 'OTEL_EXPORTER_OTLP_HEADERS',
        pattern: `^${keyValueListPattern("[-!#$%&'*+.^_`|~0-9A-Za-z]+")}$`,
        hint: 'name=value pairs separated by commas',
        secret: true,
        description:
          'Headers sent with every export, `name=value` pairs separated by commas, values percent-encoded (e.g. `authorization=Bearer%20…`).',
      }),
    ),
    timeoutMs: Type.Integer({
      env: 'OTEL_EXPORTER_OTLP_TIMEOUT',
      default: 10_000,
      minimum: 1,
      description: 'How long one export to the collector may take, in milliseconds.',
    }),
    serviceName: Type.Optional(
      Type.String({
        env: 'OTEL_SERVICE_NAME',
        minLength: 1,
        description:
          "The traces' `service.name`; unset: `service.name` from OTEL_RESOURCE_ATTRIBUTES, else `msv3-gateway`.",
      }),
    ),
    resourceAttributes: Type.Optional(
      Type.String({
        env: 'OTEL_RESOURCE_ATTRIBUTES',
        pattern: `^${keyValueListPattern('[^\\s=,]+')}$`,
        hint: 'key=value pairs separated by commas',
        description:
          'Further resource attributes, `key=value` pairs separated by commas, values percent-encoded (e.g. `deployment.environment.name=production`).',
      }),
    ),
    sampler: Type.Enum(
      [
        'always_on',
        'always_off',
        'traceidratio',
        'parentbased_always_on',
        'parentbased_always_off',
        'parentbased_traceidratio',
      ],
      {
        env: 'OTEL_TRACES_SAMPLER',
        default: 'parentbased_always_on',
        description:
          "Which traces are recorded. `parentbased_*` follow the sampled flag of the caller's `traceparent` and apply the rest to new traces.",
      },
    ),
    samplerArg: Type.Number({
      env: 'OTEL_TRACES_SAMPLER_ARG',
      default: 1,
      minimum: 0,
      maximum: 1,
      description: 'Share of new traces the `traceidratio` samplers record (0 to 1).',
    }),
  }),
});

export type Config = Static<typeof ConfigSchema>;

/** A bad configuration value; the message names the environment variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface Setting {
  section: string;
  key: string;
  env: string;
  /** `secret` settings never have their value echoed in errors; `hint` replaces a raw pattern in messages. */
  schema: TSchema & {
    env: string;
    default?: unknown;
    description?: string;
    secret?: boolean;
    hint?: string;
    /** A union of choices (`WORKERS`: `auto` or a number). */
    anyOf?: TSchema[];
  };
  optional: boolean;
}

/** Every setting, in schema order (for docs/configuration.md and `--help`). */
export function listSettings(): Setting[] {
  const settings: Setting[] = [];
  for (const [section, sectionSchema] of Object.entries(ConfigSchema.properties)) {
    const required = new Set<string>((sectionSchema as { required?: string[] }).required ?? []);
    for (const [key, schema] of Object.entries(
      sectionSchema.properties as unknown as Record<string, Setting['schema']>,
    )) {
      settings.push({ section, key, env: schema.env, schema, optional: !required.has(key) });
    }
  }
  return settings;
}

const checkConfig = Compile(ConfigSchema);

/**
 * Builds the configuration once at start-up: defaults, then the JSON file (`options.file` or
 * `CONFIG_FILE`, shaped like `Config`), then environment variables (empty ones count as unset).
 */
export function loadConfig(env: NodeJS.ProcessEnv, options: { file?: string } = {}): Config {
  const filePath = options.file ?? (env.CONFIG_FILE || undefined);
  const file = filePath === undefined ? {} : readConfigFile(filePath);
  const settings = listSettings();
  const known = new Set(settings.map((s) => `${s.section}.${s.key}`));
  for (const [section, values] of Object.entries(file)) {
    if (!isRecord(values) || !(section in ConfigSchema.properties)) {
      throw new ConfigError('CONFIG_FILE', `CONFIG_FILE ${filePath}: "${section}" is not a settings section`);
    }
    for (const key of Object.keys(values)) {
      if (!known.has(`${section}.${key}`)) {
        throw new ConfigError('CONFIG_FILE', `CONFIG_FILE ${filePath}: unknown setting "${section}.${key}"`);
      }
    }
  }

  const raw: Record<string, Record<string, unknown>> = {};
  const origin = new Map<string, string>();
  for (const { section, key, env: name, schema } of settings) {
    const fromEnv = env[name];
    const fromFile = (file[section] as Record<string, unknown> | undefined)?.[key];
    let value: unknown = schema.default;
    if (fromEnv !== undefined && fromEnv !== '') {
      value = fromEnvText(schema, fromEnv);
      origin.set(`/${section}/${key}`, `${name}`);
    } else if (fromFile !== undefined) {
      value = fromFile;
      origin.set(`/${section}/${key}`, `${name} (${section}.${key} in ${filePath})`);
    }
    raw[section] ??= {};
    if (value !== undefined) raw[section][key] = value;
  }

  const error = checkConfig.Errors(raw)[0];
  if (error !== undefined) {
    const setting = settings.find((s) => `${error.instancePath}/`.startsWith(`/${s.section}/${s.key}/`));
    const name = setting?.env ?? 'CONFIG_FILE';
    const shown = setting?.schema.secret ? '' : ` (got ${JSON.stringify(valueAt(raw, error.instancePath))})`;
    const problem =
      (error.keyword === 'pattern' || setting?.schema.anyOf !== undefined) && setting?.schema.hint
        ? `must be ${setting.schema.hint}`
        : describe(error);
    const path = setting === undefined ? error.instancePath : `/${setting.section}/${setting.key}`;
    throw new ConfigError(name, `${origin.get(path) ?? name} ${problem}${shown}`);
  }
  const config = raw as Config;
  if (config.startup.strictConfig) refuseMisspeltVariables(env, origin.get('/startup/strictConfig'));
  checkCidrs(config, origin.get('/network/allowedPrivateCidrs') ?? 'ALLOWED_PRIVATE_CIDRS');
  checkCombinations(config);
  return deepFreeze(config);
}

/**
 * Variables read besides the settings: the configuration file, a cluster worker's slot
 * (src/cluster/role.ts) and what the `listen` command takes (src/webhooks/events/listen-command.ts).
 */
const OTHER_VARIABLES = [
  'CONFIG_FILE',
  'MSV3_GATEWAY_WORKER',
  'MSV3_API_KEY',
  'MSV3_GATEWAY_URL',
  'MSV3_WEBHOOK_SECRET',
];

/**
 * Environment variables that are no setting but look like a misspelt one (`DATABSE_URL` for
 * `DATABASE_URL`): such a setting silently keeps its default. A warning at start-up, an error with
 * STRICT_CONFIG.
 */
export function misspeltVariables(env: NodeJS.ProcessEnv): MisspeltName[] {
  const known = [...listSettings().map((s) => s.env), ...OTHER_VARIABLES];
  return misspeltNames(
    Object.keys(env).filter((name) => env[name] !== undefined),
    known,
  );
}

/** What is wrong with one misspelt variable, for a warning or the strict error. */
export function misspeltVariableMessage({ typed, meant }: MisspeltName): string {
  return `${typed} is not a setting (did you mean ${meant}?)`;
}

function refuseMisspeltVariables(env: NodeJS.ProcessEnv, strictFrom = 'STRICT_CONFIG'): void {
  const misspelt = misspeltVariables(env);
  if (misspelt.length === 0) return;
  const which = misspelt.length === 1 ? 'it' : 'them';
  throw new ConfigError(
    misspelt[0]!.typed,
    `${misspelt.map(misspeltVariableMessage).join('; ')}: rename or remove ${which} (${strictFrom} refuses variables that look like misspelt settings)`,
  );
}

function checkCombinations(config: Config): void {
  const { probeIntervalMs } = config.wholesalers;
  if (probeIntervalMs > 0 && probeIntervalMs < 1_000) {
    throw new ConfigError(
      'WHOLESALER_PROBE_INTERVAL_MS',
      'WHOLESALER_PROBE_INTERVAL_MS must be 0 (off) or at least 1000',
    );
  }
  const { connectTimeoutMs, headersTimeoutMs, totalTimeoutMs } = config.upstream;
  if (totalTimeoutMs < connectTimeoutMs + headersTimeoutMs) {
    // A shorter deadline would pre-empt the phase timeouts, and their clearer 504 messages, every time.
    throw new ConfigError(
      'UPSTREAM_TOTAL_TIMEOUT_MS',
      `UPSTREAM_TOTAL_TIMEOUT_MS (${totalTimeoutMs}) must be at least UPSTREAM_CONNECT_TIMEOUT_MS + UPSTREAM_HEADERS_TIMEOUT_MS (${connectTimeoutMs + headersTimeoutMs})`,
    );
  }
  if (config.webhooks.leaseMs <= config.webhooks.timeoutMs) {
    throw new ConfigError('WEBHOOK_LEASE_MS', 'WEBHOOK_LEASE_MS must exceed WEBHOOK_TIMEOUT_MS');
  }
  if (config.server.workers !== 1 && config.database.url === 'sqlite::memory:') {
    throw new ConfigError(
      'WORKERS',
      'WORKERS other than 1 needs a database file or PostgreSQL: each worker would have its own sqlite::memory:',
    );
  }
  const { healthPort, port, workers } = config.server;
  if (healthPort !== undefined && workers !== 1) {
    throw new ConfigError(
      'HEALTH_PORT',
      'HEALTH_PORT needs WORKERS=1 (worker processes cannot share it); with several workers the probes are on PORT',
    );
  }
  if (healthPort !== undefined && healthPort !== 0 && healthPort === port) {
    throw new ConfigError('HEALTH_PORT', `HEALTH_PORT must differ from PORT (both ${port})`);
  }
  const { store } = config.rateLimit;
  if (store === 'redis' && config.redis.url === undefined) {
    throw new ConfigError('RATE_LIMIT_STORE', 'RATE_LIMIT_STORE=redis needs REDIS_URL');
  }
  if (store === 'database' && !config.database.url.startsWith('postgres')) {
    throw new ConfigError(
      'RATE_LIMIT_STORE',
      'RATE_LIMIT_STORE=database needs a PostgreSQL DATABASE_URL (use memory with SQLite)',
    );
  }
}

/** The CIDR ranges are parsed here, so a bad one stops start-up instead of the first outbound call. */
function checkCidrs(config: Config, origin: string): void {
  for (const text of config.network.allowedPrivateCidrs ?? []) {
    const parsed = parseCidr(text);
    if (!parsed.ok) {
      throw new ConfigError(
        'ALLOWED_PRIVATE_CIDRS',
        `${origin}: "${text}" is not a CIDR range: ${parsed.problem}`,
      );
    }
  }
}

function readConfigFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new ConfigError(
      'CONFIG_FILE',
      `CONFIG_FILE ${path} cannot be read as JSON: ${(cause as Error).message}`,
    );
  }
  if (!isRecord(parsed)) throw new ConfigError('CONFIG_FILE', `CONFIG_FILE ${path} must hold a JSON object`);
  return parsed;
}

/**
 * Environment values are text; turn them into the type the setting expects (validation reports the rest).
 * A union (`auto` or a number) takes a number when the text is one.
 */
function fromEnvText(schema: TSchema, text: string): unknown {
  const { type, anyOf } = schema as { type?: string; anyOf?: { type?: string }[] };
  const types = anyOf === undefined ? [type] : anyOf.map((choice) => choice.type);
  const trimmed = text.trim();
  if ((types.includes('integer') || types.includes('number')) && /^[+-]?\d+(\.\d+)?$/.test(trimmed))
    return Number(trimmed);
  if (type === 'array') {
    return trimmed
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }
  if (type === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(trimmed)) return true;
    if (/^(false|0|no|off)$/i.test(trimmed)) return false;
  }
  return text;
}

function describe(error: { keyword: string; message: string; params: Record<string, unknown> }): string {
  if (error.keyword === 'enum') {
    return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
  }
  return error.message;
}

function valueAt(raw: Record<string, Record<string, unknown>>, pointer: string): unknown {
  const [, section = '', key = ''] = pointer.split('/');
  return raw[section]?.[key];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (isRecord(value)) for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}
