import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { GatewayApp } from './http/types.js';
import { VERSION } from './http/version.js';
import { type Clock, systemClock } from './lib/clock.js';
import { optionsFromSettings } from './mock/options.js';
import { startMockWholesaler } from './mock/server.js';
import { createLogger } from './observability/logger.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { createRateLimiter } from './ratelimit/create.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { openDatabase } from './store/database.js';
import { createFirstKeyOnce } from './store/first-key.js';
import { migrateToLatest } from './store/migrate.js';
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
   * Stops accepting connections, lets in-flight requests finish within SHUTDOWN_TIMEOUT_MS (then cuts
   * the remaining connections), closes the wholesaler connections, the sandbox mock, the rate limiter
   * and the database. `clean` is false if cut.
   */
  close(): Promise<{ clean: boolean }>;
}

interface Closable {
  name: string;
  close(): Promise<unknown>;
}

/**
 * config → wholesaler catalogue → database → migrations → first key → rate limiter → sandbox mock →
 * wholesaler transports → app → listen.
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
    const applied = await migrateToLatest(database);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    const firstKey = config.apiKeys.createFirstKey ? await createFirstKeyOnce(database, clock) : undefined;
    const rateLimiter = options.rateLimiter ?? (await createRateLimiter(config, database));
    opened.unshift({ name: 'rate limiter', close: () => rateLimiter.close() });
    const sandboxUrl = await startSandbox(config, clock, opened);
    const wholesalerStatus = createWholesalerStatusFeed();
    const upstream = createUpstream({
      config,
      db: database.db,
      catalogue,
      sandboxUrl: () => sandboxUrl,
      clock,
      onBreakerChange: wholesalerStatus.publish,
    });
    opened.unshift({ name: 'wholesaler connections', close: () => upstream.close() });
    const metrics = options.metrics ?? createMetrics({ processMetrics: true });
    const webhooks = createWebhooks({ config, database, clock, metrics, logger, version: VERSION });
    const stopWebhooks = () => webhooks.close({ timeoutMs: config.server.shutdownTimeoutMs });
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
      // The webhook worker stops claiming at once and finishes its attempts while HTTP drains.
      close: () => {
        void stopWebhooks().catch(() => {});
        return closeGracefully(app, dependencies, config.server.shutdownTimeoutMs, logger);
      },
    };
  } catch (error) {
    for (const resource of opened) await resource.close().catch(() => {});
    throw error;
  }
}

/**
 * The built-in mock wholesaler on a random loopback port (its scenario timings from MOCK_*), unless
 * SANDBOX_URL names an external one.
 */
async function startSandbox(config: Config, clock: Clock, opened: Closable[]): Promise<string> {
  if (config.wholesalers.sandboxUrl !== undefined) return config.wholesalers.sandboxUrl.replace(/\/+$/, '');
  const mock = await startMockWholesaler({
    ...optionsFromSettings(config.mock),
    host: '127.0.0.1',
    port: 0,
    clock,
  });
  opened.unshift({ name: 'sandbox wholesaler', close: () => mock.close() });
  return mock.url;
}

async function closeGracefully(
  app: GatewayApp,
  dependencies: readonly Closable[],
  timeoutMs: number,
  logger: Logger,
): Promise<{ clean: boolean }> {
  let clean = true;
  const deadline = setTimeout(() => {
    clean = false;
    logger.warn({ timeout_ms: timeoutMs }, 'shutdown timeout reached; closing remaining connections');
    app.server.closeAllConnections();
  }, timeoutMs);
  try {
    await app.close();
  } finally {
    clearTimeout(deadline);
    for (const dependency of dependencies) {
      await dependency
        .close()
        .catch((err: unknown) => logger.warn({ err }, `closing the ${dependency.name} failed`));
    }
  }
  return { clean };
}

function serverUrl(app: GatewayApp): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * SIGTERM/SIGINT: close gracefully, then exit 0 (1 if connections had to be cut or closing failed).
 * A second signal exits at once. `stop` starts the same graceful stop without a signal (a cluster
 * worker told to stop by its primary); it does nothing once stopping, so a signal that reaches the
 * primary and its workers together (Ctrl-C) still counts as one.
 */
export function exitOnSignals(
  server: RunningServer,
  logger: Logger,
  exit: (code: number) => void,
): { stop(reason: string): void } {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal; exiting now');
      exit(1);
      return;
    }
    begin({ signal });
  };
  const begin = (why: { signal: NodeJS.Signals } | { reason: string }) => {
    if (stopping) return;
    stopping = true;
    logger.info(why, 'shutting down');
    server.close().then(
      ({ clean }) => {
        logger.info({ clean }, 'stopped');
        exit(clean ? 0 : 1);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return { stop: (reason) => begin({ reason }) };
}
