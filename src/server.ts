import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { SignalSource } from './held-signals.js';
import { startHealthListener } from './http/health-listener.js';
import { checkReadiness } from './http/readiness.js';
import type { GatewayApp } from './http/types.js';
import { settleBuiltinPrototypes } from './lib/builtin-prototypes.js';
import type { Clock } from './lib/clock.js';
import { heapBudgetWarning } from './lib/heap-budget.js';
import { pinTickShape } from './lib/tick-shape.js';
import { createLogger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { reportStartup } from './startup-summary.js';
import type { WatchStatus } from './wholesalers/status/watch.js';
import { buildDependencies, type Closable, type ShutdownTiming, shutdownTiming } from './wiring.js';

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
  watchStatus?: WatchStatus;
  /** The process's metrics (cluster workers: answering `GET /metrics` for all); by default its own. */
  metrics?: Metrics;
  /**
   * Log the start-up summary and print the start-up lines (src/startup-summary.ts); default true.
   * Cluster workers leave them to their primary, which says them once for all.
   */
  summary?: boolean;
}

export interface RunningServer {
  app: GatewayApp;
  url: string;
  /** Where `pk_test_` calls go: the in-process mock wholesaler, or SANDBOX_URL. */
  sandboxUrl: string;
  /**
   * Answers new requests 503 and lets in-flight requests finish within SHUTDOWN_TIMEOUT_MS, then stops
   * listening: shortly before the limit it stops the wholesaler calls still in flight, so their requests
   * are answered, and at the limit it cuts the connections still open; then it closes the webhook
   * worker, the wholesaler connections, the sandbox mock, the rate limiter and the database. `clean` is
   * false if calls had to be stopped or connections cut (docs/resilience.md "Shutdown").
   */
  close(): Promise<{ clean: boolean }>;
  /** SHUTDOWN_TIMEOUT_MS: `close()` ends within it, give or take closing the dependencies. */
  shutdownTimeoutMs: number;
}

/**
 * config → dependencies (`buildDependencies`, src/wiring.ts: catalogue, database, tracing, migrations,
 * first key, rate limiter, sandbox mock, wholesaler transports, metrics, webhooks, status watch, periodic
 * jobs) → app → listen → webhook worker and periodic jobs.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config } = options;
  // Before start-up's full garbage collections can make Node's ticks dearer for good (lib/tick-shape.ts).
  pinTickShape();
  const print = options.print ?? (() => {});
  const logger = options.logger ?? createLogger({ level: config.log.level });
  const heapWarning = heapBudgetWarning(config.upstream, getHeapStatistics().heap_size_limit);
  if (heapWarning !== null) logger.warn(heapWarning);
  const { deps, sandboxUrl, firstKey, jobs, stopCalls, stopWebhooks, opened } = await buildDependencies(
    config,
    {
      logger,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
      ...(options.watchStatus === undefined ? {} : { watchStatus: options.watchStatus }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    },
  );
  try {
    const timing = shutdownTiming(config.server.shutdownTimeoutMs);
    const app = await buildApp(deps);
    opened.unshift({ name: 'app', close: () => app.close() });
    const { host, port, listenBacklog: backlog, healthPort } = config.server;
    // Every module is loaded now: before the first request makes code hot (lib/builtin-prototypes.ts).
    settleBuiltinPrototypes();
    await app.listen({ host, port, backlog });
    const health =
      healthPort === undefined
        ? undefined
        : await startHealthListener({
            host,
            port: healthPort,
            backlog,
            checkReadiness: () => checkReadiness(deps),
          });
    // Closed after the app: probes are answered (not ready) throughout the drain.
    if (health !== undefined) opened.splice(1, 0, { name: 'health listener', close: health.close });
    if (config.webhooks.workerEnabled) deps.webhooks.worker.start();
    jobs.start();
    const url = serverUrl(app);
    if (options.summary !== false) {
      const { database, clock } = deps;
      const printSecret = options.printSecret ?? print;
      await reportStartup({
        ...{ config, database, clock, url, sandboxUrl, workers: 1, firstKey, logger, print, printSecret },
        ...(health === undefined ? {} : { healthUrl: health.url }),
      });
    }
    const dependencies = opened.slice(1);
    return {
      app,
      url,
      sandboxUrl,
      shutdownTimeoutMs: config.server.shutdownTimeoutMs,
      // The webhook worker stops claiming at once and finishes its attempts while HTTP drains.
      close: () => {
        health?.draining();
        void stopWebhooks().catch(() => {});
        return closeGracefully({ app, dependencies, timing, stopCalls, logger });
      },
    };
  } catch (error) {
    for (const resource of opened) await resource.close().catch(() => {});
    throw error;
  }
}

/**
 * Draining within SHUTDOWN_TIMEOUT_MS (docs/resilience.md "Shutdown"): HTTP finishes the requests in
 * flight while new requests, on new connections and open ones, get 503 with `Connection: close`
 * (`http/lifecycle.ts`); then it stops listening. A wholesaler call that would outlast the limit (a
 * wholesaler holding its answer) is stopped `ANSWER_MARGIN_MS` before it, so its request is still
 * answered (504, `order_outcome_unknown`, …) rather than cut. At the limit the connections still open
 * are cut. Then the dependencies close, newest first.
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
  let reachDeadline = () => {};
  const deadlineReached = new Promise<void>((resolve) => {
    reachDeadline = resolve;
  });
  const deadline = setTimeout(() => {
    clean = false;
    logger.warn({ timeout_ms: timing.timeoutMs }, 'shutdown timeout reached; closing remaining connections');
    app.server.closeAllConnections();
    reachDeadline();
  }, timing.timeoutMs);
  try {
    // The listener stays open while the requests in flight finish, so that new connections get a
    // 503 with Retry-After (and readiness fails) instead of a refused connection; at the latest the
    // deadline above ends them.
    await Promise.race([app.drain(), deadlineReached]);
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

function serverUrl(app: GatewayApp): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** After SHUTDOWN_TIMEOUT_MS plus this, the process exits whatever is still closing. */
export const EXIT_GRACE_MS = 750;

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
  /** Where the signals come from: the process, those held since start-up began, or a test's emitter. */
  signals: SignalSource = process,
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
