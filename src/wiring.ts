import type { Logger } from 'pino';
import type { Config } from './config.js';
import { VERSION } from './core/version.js';
import type { AppDeps, ServiceDeps } from './http/app-deps.js';
import { periodicJobs } from './jobs.js';
import { type AddressPolicy, createAddressPolicy, type HostLookup } from './lib/address-policy.js';
import { type Clock, systemClock } from './lib/clock.js';
import { type PeriodicJobs, schedulePeriodicJobs } from './lib/periodic.js';
import { optionsFromSettings } from './mock/options.js';
import { startMockWholesaler } from './mock/server.js';
import { persistentWorld } from './mock/world-store.js';
import { registerDependencyGauges } from './observability/dependency-metrics.js';
import { createLogger } from './observability/logger.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { startTracing } from './observability/start-tracing.js';
import type { Tracing } from './observability/tracing.js';
import { createRateLimiter } from './ratelimit/create.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { createContractCache } from './services/orders/contract-check.js';
import type { OrderDeps } from './services/orders/state.js';
import { noticeSandboxOrderDeliveries } from './services/sandbox-controls.js';
import { type Database, openDatabase } from './store/database.js';
import { databaseStartError } from './store/database-start-error.js';
import { createFirstKeyOnce } from './store/first-key.js';
import { migrateToLatest } from './store/migrate.js';
import { pingDatabase } from './store/ping.js';
import { sandboxTenantStore } from './store/sandbox-state.js';
import { eventRecorder } from './webhooks/events/record.js';
import { createWebhooks } from './webhooks/service.js';
import { createAnswerDeviations } from './wholesalers/answer-deviations.js';
import { type CatalogueEntry, DEFAULT_CATALOGUE_FILE, loadCatalogue } from './wholesalers/catalogue.js';
import { createWholesalerStatusFeed } from './wholesalers/status/feed.js';
import { type WatchStatus, watchWholesalerStatus } from './wholesalers/status/watch.js';
import { createUpstream } from './wholesalers/upstream.js';

/** How long the scrape's database check (`msv3_gateway_database_up`) waits for `select 1`. */
const DATABASE_CHECK_TIMEOUT_MS = 1_000;

/** Something opened at start-up and closed at shutdown (or when start-up fails), newest first. */
export interface Closable {
  name: string;
  close(): Promise<unknown>;
}

/** What the server, cluster workers and tests swap; everything else is built from the configuration. */
export interface WiringOverrides {
  /** Default: pino at LOG_LEVEL. */
  logger?: Logger;
  clock?: Clock;
  /**
   * An open, migrated database the caller owns (tests): neither migrated nor given a first key here,
   * and not closed with the rest. Default: DATABASE_URL, opened, migrated and closed here.
   */
  database?: Database;
  /** Spans of requests and wholesaler calls; the caller closes it. Default: from OTEL_* (closed here). */
  tracing?: Tracing;
  /** Tests, cluster workers. Default: the configured store (RATE_LIMIT_STORE). Closed here either way. */
  rateLimiter?: RateLimiter;
  /** Where `pk_test_` calls go; no sandbox mock is started then. Default: SANDBOX_URL or the built-in mock. */
  sandboxUrl?: string;
  /** The wholesaler catalogue. Default: WHOLESALER_CATALOGUE_FILE or the shipped one. */
  catalogue?: readonly CatalogueEntry[];
  /** Host name resolution instead of DNS: URL checks, webhook deliveries, custom wholesaler calls. */
  lookup?: HostLookup;
  /** Default: from ALLOW_PRIVATE_ENDPOINTS and ALLOWED_PRIVATE_CIDRS. */
  addressPolicy?: AddressPolicy;
  /** Default: the process's own registry with process metrics. */
  metrics?: Metrics;
  /**
   * Who announces `wholesaler.status_changed`: by default this process, from its own breakers and
   * probes; cluster workers pass the relay (src/cluster/status-relay.ts); null: nobody (tests, whose
   * event feeds must hold only what they caused).
   */
  watchStatus?: WatchStatus | null;
}

export interface Dependencies {
  /** What `buildApp` takes. */
  deps: AppDeps;
  /** Where `pk_test_` calls go: the in-process mock wholesaler, or SANDBOX_URL. */
  sandboxUrl: string;
  /** This start created the first account and key (CREATE_FIRST_KEY on an empty database). */
  firstKey?: { accountId: string; secret: string };
  /** The periodic jobs (src/jobs.ts), not yet started: the server starts them once it listens. */
  jobs: PeriodicJobs;
  /** Stops the wholesaler calls still in flight (at shutdown, shortly before its limit). */
  stopCalls(): void;
  /**
   * Stops the webhook worker: no more claims, attempts in flight get until the wholesaler calls are
   * stopped (docs/resilience.md "Shutdown"). The same promise every time.
   */
  stopWebhooks(): Promise<void>;
  /**
   * What was opened, newest first, in the order to close it: periodic jobs, wholesaler probes, webhook
   * worker, wholesaler connections, sandbox wholesaler, rate limiter, tracing, database.
   */
  opened: Closable[];
}

/**
 * Builds every dependency of the app, in start order: wholesaler catalogue → database → tracing →
 * migrations → first key → rate limiter → sandbox mock → metrics → wholesaler transports → webhooks →
 * status watch → periodic jobs. `startServer` (and so every cluster worker) and the tests' `buildTestApp`
 * use it; what they do differently is in `overrides`. When a step fails, what was opened is closed.
 */
export async function buildDependencies(
  config: Config,
  overrides: WiringOverrides = {},
): Promise<Dependencies> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger({ level: config.log.level });
  const catalogue =
    overrides.catalogue ?? loadCatalogue(config.wholesalers.catalogueFile ?? DEFAULT_CATALOGUE_FILE);
  const database = overrides.database ?? (await openGatewayDatabase(config, logger));
  const opened: Closable[] =
    overrides.database === undefined ? [{ name: 'database', close: () => database.close() }] : [];
  try {
    // Closed after the app and the wholesaler connections, so the last requests' spans are sent.
    let tracing = overrides.tracing;
    if (tracing === undefined) {
      const started = await startTracing(config.tracing, { logger, version: VERSION });
      opened.unshift({ name: 'tracing', close: () => started.close() });
      if (started.enabled) logger.info({ collector: originOf(config.tracing.endpoint) }, 'tracing on');
      tracing = started;
    }
    const firstKey =
      overrides.database === undefined
        ? await prepareDatabase(config, database, { clock, logger })
        : undefined;
    const rateLimiter = overrides.rateLimiter ?? (await createRateLimiter(config, database));
    opened.unshift({ name: 'rate limiter', close: () => rateLimiter.close() });
    let sandboxUrl = overrides.sandboxUrl;
    if (sandboxUrl === undefined) {
      const sandbox = await startSandbox(config, { clock, database });
      if (sandbox.close !== undefined) opened.unshift({ name: 'sandbox wholesaler', close: sandbox.close });
      sandboxUrl = sandbox.url;
    }
    const wholesalerStatus = createWholesalerStatusFeed();
    // Aborted on shutdown, shortly before the limit: stops the wholesaler calls still in flight.
    const stopCalls = new AbortController();
    // One policy for every customer-chosen outbound address: registrations, webhooks, custom wholesalers.
    const policy = overrides.addressPolicy ?? createAddressPolicy(config.network);
    const lookup = overrides.lookup;
    const outbound = { policy, ...(lookup === undefined ? {} : { lookup }) };
    const metrics = overrides.metrics ?? createMetrics({ processMetrics: true });
    const redisConnected = rateLimiter.redisConnected?.bind(rateLimiter);
    registerDependencyGauges(metrics.registry, {
      database: async () => (await pingDatabase(database.db, DATABASE_CHECK_TIMEOUT_MS)).up,
      ...(redisConnected === undefined ? {} : { redis: redisConnected }),
    });
    const upstream = createUpstream({
      config,
      db: database.db,
      catalogue,
      sandboxUrl: () => sandboxUrl,
      clock,
      onBreakerChange: wholesalerStatus.publish,
      stop: stopCalls.signal,
      addressPolicy: policy,
      ...(lookup === undefined ? {} : { lookup }),
      tracing,
      metrics: metrics.wholesalers,
      deviations: createAnswerDeviations({ counter: metrics.answerDeviations, logger }),
    });
    opened.unshift({ name: 'wholesaler connections', close: () => upstream.close() });
    const webhooks = createWebhooks({
      config,
      database,
      clock,
      metrics,
      logger,
      version: VERSION,
      addressPolicy: policy,
      lookup,
    });
    // Deliveries still in flight then are aborted with the wholesaler calls; their leases are released
    // while the database is still open, so another worker retries them.
    const stopWebhooks = () =>
      webhooks.close({ timeoutMs: shutdownTiming(config.server.shutdownTimeoutMs).stopCallsAfterMs });
    opened.unshift({ name: 'webhook worker', close: stopWebhooks });
    const watchStatus = overrides.watchStatus === undefined ? watchWholesalerStatus : overrides.watchStatus;
    const watch = watchStatus?.({
      db: database.db,
      clock,
      wake: webhooks.wake,
      logger,
      feed: wholesalerStatus,
      upstream,
      probeIntervalMs: config.wholesalers.probeIntervalMs,
    });
    if (watch !== undefined) opened.unshift({ name: 'wholesaler probes', close: () => watch.stop() });
    const jobs = schedulePeriodicJobs(
      periodicJobs({ config, database, clock, statusJobs: watch?.jobs ?? [] }),
      logger,
    );
    // Before the probes: a probe round in flight is awaited while the upstream connections are open.
    opened.unshift({ name: 'periodic jobs', close: () => jobs.stop() });
    const services = buildServiceDeps(config, {
      upstream: upstream.deps,
      database,
      clock,
      logger,
      webhooks,
      wholesalerStatus,
      outbound,
    });
    return {
      deps: {
        config,
        database,
        rateLimiter,
        logger,
        clock,
        metrics,
        upstream: upstream.deps,
        wholesalerStatus,
        webhooks,
        outbound,
        tracing,
        services,
      },
      sandboxUrl,
      ...(firstKey === undefined ? {} : { firstKey }),
      jobs,
      stopCalls: () => stopCalls.abort(),
      stopWebhooks,
      opened,
    };
  } catch (error) {
    for (const resource of opened) await resource.close().catch(() => {});
    throw error;
  }
}

/**
 * What each service is given, built here once: the routes only pass it on. Events are recorded through
 * one recorder that wakes this process's webhook worker; a sandbox order's delivery notices are noticed
 * once it is placed (docs/sandbox.md "Test helpers").
 */
function buildServiceDeps(
  config: Config,
  parts: Pick<
    AppDeps,
    'upstream' | 'database' | 'clock' | 'logger' | 'webhooks' | 'wholesalerStatus' | 'outbound'
  >,
): ServiceDeps {
  const { upstream, clock, webhooks, outbound } = parts;
  const { db } = parts.database;
  const recordEvent = eventRecorder({ clock, wake: webhooks.wake });
  const deliveries = { upstream, db, clock, recordEvent };
  const orders: OrderDeps = {
    upstream,
    db,
    clock,
    recordEvent,
    log: parts.logger,
    afterPlaced: (tenant, orderId) => noticeSandboxOrderDeliveries(sandbox, tenant, orderId),
    contracts: createContractCache({ clock, ttlMs: config.orders.contractCacheTtlMs }),
    maxPositions: config.orders.maxPositions,
  };
  const sandbox = { orders, deliveries, status: parts.wholesalerStatus };
  const checksUrls = {
    db,
    clock,
    addressPolicy: outbound.policy,
    ...(outbound.lookup === undefined ? {} : { lookup: outbound.lookup }),
  };
  return {
    orders,
    deliveries,
    documents: { upstream, db },
    connection: { upstream, db, clock },
    customWholesalers: checksUrls,
    subscriptions: { ...checksUrls, resolveWholesaler: upstream.registry.resolve, wake: webhooks.wake },
    attempts: { ...webhooks.deliver, leaseMs: webhooks.leaseMs },
    sandbox,
  };
}

/**
 * DATABASE_URL, opened; a lost PostgreSQL connection is logged (code and message only). One that cannot
 * be opened fails with the cause in words (`databaseStartError`).
 */
export function openGatewayDatabase(config: Config, logger: Logger): Promise<Database> {
  return openDatabase(config.database.url, {
    // Code and message only: pg hangs the client (with its connection settings) on the error object.
    onConnectionError: (err: Error & { code?: string }) =>
      logger.warn({ code: err.code, reason: err.message }, 'database connection lost'),
  }).catch((error: unknown) => {
    throw databaseStartError(config.database.url, error);
  });
}

/** Migrations, then the first key when CREATE_FIRST_KEY and the database has none (once per database). */
export async function prepareDatabase(
  config: Config,
  database: Database,
  deps: { clock: Clock; logger: Logger },
): Promise<{ accountId: string; secret: string } | undefined> {
  const applied = await migrateToLatest(database);
  if (applied.length > 0) deps.logger.info({ migrations: applied }, 'database migrated');
  return config.apiKeys.createFirstKey ? createFirstKeyOnce(database, deps.clock) : undefined;
}

/**
 * The built-in mock wholesaler on a random loopback port (its scenario timings from MOCK_*), its state in
 * the gateway's database, unless SANDBOX_URL names an external one (then there is nothing to close).
 */
export async function startSandbox(
  config: Config,
  deps: { clock: Clock; database: Database },
): Promise<{ url: string; close?: () => Promise<void> }> {
  if (config.wholesalers.sandboxUrl !== undefined) {
    return { url: config.wholesalers.sandboxUrl.replace(/\/+$/, '') };
  }
  const mock = await startMockWholesaler({
    ...optionsFromSettings(config.mock),
    host: '127.0.0.1',
    port: 0,
    clock: deps.clock,
    world: persistentWorld(sandboxTenantStore(deps.database.db, deps.clock)),
  });
  return { url: mock.url, close: () => mock.close() };
}

/** How long before SHUTDOWN_TIMEOUT_MS the wholesaler calls are stopped: time to write their answers. */
const ANSWER_MARGIN_MS = 500;

export interface ShutdownTiming {
  /** SHUTDOWN_TIMEOUT_MS: then connections still open are cut. */
  timeoutMs: number;
  /** Then wholesaler calls and webhook deliveries still in flight are stopped. */
  stopCallsAfterMs: number;
}

/** A short limit keeps three quarters of itself for the requests, a quarter for writing answers. */
export function shutdownTiming(timeoutMs: number): ShutdownTiming {
  const margin = Math.min(ANSWER_MARGIN_MS, Math.floor(timeoutMs / 4));
  return { timeoutMs, stopCallsAfterMs: timeoutMs - margin };
}

/** Only the collector's origin is logged: some collectors take a tenant or token in the path. */
function originOf(url: string | undefined): string | undefined {
  return url === undefined ? undefined : new URL(url).origin;
}
