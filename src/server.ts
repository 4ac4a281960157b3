import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { VERSION } from './core/version.js';
import type { GatewayApp } from './http/types.js';
import { createAddressPolicy } from './lib/address-policy.js';
import { type Clock, systemClock } from './lib/clock.js';
import { optionsFromSettings } from './mock/options.js';
import { startMockWholesaler } from './mock/server.js';
import { persistentWorld } from './mock/world-store.js';
import { createLogger } from './observability/logger.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { startTracing } from './observability/start-tracing.js';
import { createRateLimiter } from './ratelimit/create.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { type Database, openDatabase } from './store/database.js';
import { createFirstKeyOnce } from './store/first-key.js';
import { migrateToLatest } from './store/migrate.js';
import { sandboxTenantDocuments } from './store/sandbox-state.js';
import { createWebhooks } from './webhooks/service.js';
import { type WholesalerWatchOptions, watchWholesalerStatus } from './webhooks/wholesaler-watch.js';
import { DEFAULT_CATALOGUE_FILE, loadCatalogue } from './wholesalers/catalogue.js';
import { createWholesalerStatusFeed } from './wholesalers/status-feed.js';
import { createUpstream } from './wholesalers/upstream.js';

export interface StartServerOptions {
  config: Config;
  logger?: Logger;
  clock?: Clock;
  /** Human-readable lines (URL, docs); stderr in the CLI, so stdout stays JSON logs. */
  print?: (line: string) => void;
  /**
   * The first start's key lines; stdout in the CLI (plain lines, never a log record, so a log collector
   * that keeps only stderr or only JSON does not keep the key). Default: `print`.
   */
  printSecret?: (line: string) => void;
  /** Swap in a limiter (tests, cluster workers); by default the configured store is used. */
  rateLimiter?: RateLimiter;
  /**
   * Who announces `wholesaler.status_changed`: by default this process, from its own breakers and probes;
   * cluster workers pass the relay of src/cluster/status-relay.ts, so that one worker announces for all.
   */
  watchStatus?: (options: WholesalerWatchOptions) => { stop(): Promise<void> };
  /** The process's metrics (cluster workers: answering `GET /metrics` for all); by default its own. */
  metrics?: Metrics;
}

export interface RunningServer {
  app: GatewayApp;
  url: string;
  /** Where `pk_test_` calls go: the in-process mock wholesaler, or SANDBOX_URL. */
  sandboxUrl: string;
  /**
   * Stops accepting connections and lets in-flight requests finish within SHUTDOWN_TIMEOUT_MS: shortly
   * before the limit it stops the wholesaler calls still in flight, so their requests are answered, and
   * at the limit it cuts the connections still open; then it closes the webhook worker, the wholesaler
   * connections, the sandbox mock, the rate limiter and the database. `clean` is false if calls had to
   * be stopped or connections cut (docs/resilience.md "Shutdown").
   */
  close(): Promise<{ clean: boolean }>;
  /** SHUTDOWN_TIMEOUT_MS: `close()` ends within it, give or take closing the dependencies. */
  shutdownTimeoutMs: number;
}

interface Closable {
  name: string;
  close(): Promise<unknown>;
}

/**
 * config → wholesaler catalogue → database → tracing → migrations → first key → rate limiter → sandbox
 * mock → wholesaler transports → app → listen.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const print = options.print ?? (() => {});
  const logger = options.logger ?? createLogger({ level: config.log.level });
  const catalogue = loadCatalogue(config.wholesalers.catalogueFile ?? DEFAULT_CATALOGUE_FILE);
  const database = await openDatabase(config.database.url, {
    // Code and message only: pg hangs the client (with its connection settings) on the error object.
    onConnectionError: (err: Error & { code?: string }) =>
      logger.warn({ code: err.code, reason: err.message }, 'database connection lost'),
  });
  // Closed in this order (the newest first) on shutdown or when start-up fails.
  const opened: Closable[] = [{ name: 'database', close: () => database.close() }];
  try {
    // Closed after the app and the wholesaler connections, so the last requests' spans are sent.
    const tracing = await startTracing(config.tracing, { logger, version: VERSION });
    opened.unshift({ name: 'tracing', close: () => tracing.close() });
    if (tracing.enabled) logger.info({ collector: originOf(config.tracing.endpoint) }, 'tracing on');
    const applied = await migrateToLatest(database);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    const firstKey = config.apiKeys.createFirstKey ? await createFirstKeyOnce(database, clock) : undefined;
    const rateLimiter = options.rateLimiter ?? (await createRateLimiter(config, database));
    opened.unshift({ name: 'rate limiter', close: () => rateLimiter.close() });
    const sandboxUrl = await startSandbox(config, { clock, database }, opened);
    const wholesalerStatus = createWholesalerStatusFeed();
    // Aborted on shutdown, shortly before the limit: stops the wholesaler calls still in flight.
    const stopCalls = new AbortController();
    // One policy for every customer-chosen outbound address: registrations, webhooks, custom wholesalers.
    const outbound = { policy: createAddressPolicy(config.network) };
    const upstream = createUpstream({
      config,
      db: database.db,
      catalogue,
      sandboxUrl: () => sandboxUrl,
      clock,
      onBreakerChange: wholesalerStatus.publish,
      stop: stopCalls.signal,
      addressPolicy: outbound.policy,
      tracing,
    });
    opened.unshift({ name: 'wholesaler connections', close: () => upstream.close() });
    const metrics = options.metrics ?? createMetrics({ processMetrics: true });
    const webhooks = createWebhooks({
      config,
      database,
      clock,
      metrics,
      logger,
      version: VERSION,
      addressPolicy: outbound.policy,
    });
    const timing = shutdownTiming(config.server.shutdownTimeoutMs);
    // Deliveries still in flight then are aborted with the wholesaler calls; their leases are released
    // while the database is still open, so another worker retries them.
    const stopWebhooks = () => webhooks.close({ timeoutMs: timing.stopCallsAfterMs });
    opened.unshift({ name: 'webhook worker', close: stopWebhooks });
    const watch = (options.watchStatus ?? watchWholesalerStatus)({
      db: database.db,
      clock,
      wake: webhooks.wake,
      logger,
      feed: wholesalerStatus,
      upstream,
      probeIntervalMs: config.wholesalers.probeIntervalMs,
    });
    opened.unshift({ name: 'wholesaler probes', close: () => watch.stop() });
    const app = await buildApp({
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
    });
    opened.unshift({ name: 'app', close: () => app.close() });
    await app.listen({ host: config.server.host, port: config.server.port });
    if (config.webhooks.workerEnabled) webhooks.worker.start();
    const url = serverUrl(app);

    print(`msv3-gateway ${VERSION} listening on ${url}`);
    print(`API docs: ${url}/docs  (OpenAPI: ${url}/v1/openapi.json)`);
    print(`Sandbox wholesaler (test keys): ${sandboxUrl}`);
    if (firstKey !== undefined) {
      const printSecret = options.printSecret ?? print;
      printSecret(
        `First start: created account ${firstKey.accountId} and a test API key (shown only this once):`,
      );
      printSecret(`  ${firstKey.secret}`);
      printSecret(`Try: curl -H 'X-API-Key: ${firstKey.secret}' ${url}/v1/wholesalers`);
    }
    const dependencies = opened.slice(1);
    return {
      app,
      url,
      sandboxUrl,
      shutdownTimeoutMs: config.server.shutdownTimeoutMs,
      // The webhook worker stops claiming at once and finishes its attempts while HTTP drains.
      close: () => {
        void stopWebhooks().catch(() => {});
        return closeGracefully({
          app,
          dependencies,
          timing,
          stopCalls: () => stopCalls.abort(),
          logger,
        });
      },
    };
  } catch (error) {
    for (const resource of opened) await resource.close().catch(() => {});
    throw error;
  }
}

/**
 * The built-in mock wholesaler on a random loopback port (its scenario timings from MOCK_*), its state in
 * the gateway's database, unless SANDBOX_URL names an external one.
 */
async function startSandbox(
  config: Config,
  deps: { clock: Clock; database: Database },
  opened: Closable[],
): Promise<string> {
  if (config.wholesalers.sandboxUrl !== undefined) return config.wholesalers.sandboxUrl.replace(/\/+$/, '');
  const mock = await startMockWholesaler({
    ...optionsFromSettings(config.mock),
    host: '127.0.0.1',
    port: 0,
    clock: deps.clock,
    world: persistentWorld(sandboxTenantDocuments(deps.database.db, deps.clock)),
  });
  opened.unshift({ name: 'sandbox wholesaler', close: () => mock.close() });
  return mock.url;
}

/** How long before SHUTDOWN_TIMEOUT_MS the wholesaler calls are stopped: time to write their answers. */
const ANSWER_MARGIN_MS = 500;

interface ShutdownTiming {
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

/**
 * Draining within SHUTDOWN_TIMEOUT_MS (docs/resilience.md "Shutdown"): HTTP stops accepting and finishes
 * the requests in flight; new requests on open connections get 503 (`http/lifecycle.ts`). A wholesaler
 * call that would outlast the limit (a wholesaler holding its answer) is stopped `ANSWER_MARGIN_MS`
 * before it, so its request is still answered (504, `order_outcome_unknown`, …) rather than cut. At the
 * limit the connections still open are cut. Then the dependencies close, newest first.
 */
async function closeGracefully(options: {
  app: GatewayApp;
  dependencies: readonly Closable[];
  timing: ShutdownTiming;
  stopCalls: () => void;
  logger: Logger;
}): Promise<{ clean: boolean }> {
  const { app, dependencies, timing, stopCalls, logger } = options;
  let clean = true;
  const stopping = setTimeout(() => {
    clean = false;
    logger.warn(
      { timeout_ms: timing.timeoutMs },
      'shutdown timeout near; stopping wholesaler calls still in flight and answering their requests',
    );
    stopCalls();
  }, timing.stopCallsAfterMs);
  const deadline = setTimeout(() => {
    clean = false;
    logger.warn({ timeout_ms: timing.timeoutMs }, 'shutdown timeout reached; closing remaining connections');
    app.server.closeAllConnections();
  }, timing.timeoutMs);
  try {
    await app.close();
  } finally {
    clearTimeout(stopping);
    clearTimeout(deadline);
    // No request is left to answer; a status probe still running must not hold the exit either.
    stopCalls();
    for (const dependency of dependencies) {
      await dependency
        .close()
        .catch((err: unknown) => logger.warn({ err }, `closing the ${dependency.name} failed`));
    }
  }
  return { clean };
}

/** Only the collector's origin is logged: some collectors take a tenant or token in the path. */
function originOf(url: string | undefined): string | undefined {
  return url === undefined ? undefined : new URL(url).origin;
}

function serverUrl(app: GatewayApp): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** After SHUTDOWN_TIMEOUT_MS plus this, the process exits whatever is still closing. */
const EXIT_GRACE_MS = 750;

/**
 * SIGTERM/SIGINT: close gracefully, then exit 0 (1 if wholesaler calls had to be stopped, connections
 * cut, or closing failed). A dependency that hangs while closing does not hold the process: it exits
 * with 1 at SHUTDOWN_TIMEOUT_MS + EXIT_GRACE_MS at the latest. A second signal exits at once. `stop`
 * starts the same graceful stop without a signal (a cluster worker told to stop by its primary); it
 * does nothing once stopping, so a signal that reaches the primary and its workers together (Ctrl-C)
 * still counts as one.
 */
export function exitOnSignals(
  server: Pick<RunningServer, 'close' | 'shutdownTimeoutMs'>,
  logger: Logger,
  exit: (code: number) => void,
  /** Where the signals come from: the process, or a test's emitter. */
  signals: { on(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown } = process,
): { stop(reason: string): void } {
  let stopping = false;
  let exited = false;
  let overrun: NodeJS.Timeout | undefined;
  const exitOnce = (code: number) => {
    clearTimeout(overrun);
    if (exited) return;
    exited = true;
    exit(code);
  };
  const begin = (why: { signal: NodeJS.Signals } | { reason: string }) => {
    if (stopping) return;
    stopping = true;
    logger.info(why, 'shutting down');
    overrun = setTimeout(() => {
      logger.error({ timeout_ms: server.shutdownTimeoutMs }, 'shutdown overran its limit; exiting now');
      exitOnce(1);
    }, server.shutdownTimeoutMs + EXIT_GRACE_MS);
    server.close().then(
      ({ clean }) => {
        logger.info({ clean }, 'stopped');
        exitOnce(clean ? 0 : 1);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        exitOnce(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal; exiting now');
      exitOnce(1);
      return;
    }
    begin({ signal });
  };
  signals.on('SIGTERM', onSignal);
  signals.on('SIGINT', onSignal);
  return { stop: (reason) => begin({ reason }) };
}
