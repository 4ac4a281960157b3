import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { systemClock } from '../lib/clock.js';
import { createLogger } from '../observability/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { createClusterRateLimiter } from '../ratelimit/cluster.js';
import { budgetsFrom, resolveRateLimitStore } from '../ratelimit/create.js';
import type { RunningServer, StartServerOptions } from '../server.js';
import { CHANNEL, isGatewayMessage, type PrimaryMessage, type WorkerMessage } from './messages.js';
import { workerMetrics } from './metrics-relay.js';
import { statusRelayFor } from './status-relay.js';

/** The IPC channel to the primary (`process.send` / `process.on('message')` in a cluster worker). */
export interface PrimaryLink {
  send(message: WorkerMessage): void;
  onMessage(listener: (message: unknown) => void): void;
}

export interface ClusterWorker {
  /** Every line carries `worker` (the slot) and `pid`. */
  logger: Logger;
  /**
   * What a worker starts differently: rate limits counted by the primary, the status relay, metrics
   * whose `GET /metrics` answers for every worker (metrics-relay.ts), and no start-up summary.
   */
  startOptions: Pick<StartServerOptions, 'rateLimiter' | 'watchStatus' | 'metrics' | 'summary'>;
  /** Call once listening: tells the primary, and stops (`stop`) when the primary says so. */
  started(server: RunningServer, stop: (reason: string) => void): void;
}

/**
 * One worker of a WORKERS > 1 gateway (src/cluster/primary.ts forked it). The primary has migrated the
 * database, created the first key and started the sandbox mock (SANDBOX_URL in this worker's environment);
 * the worker runs the whole app otherwise, its own webhook worker included (claims are leased in the
 * database, safe across processes on SQLite and PostgreSQL).
 */
export function joinCluster(slot: number, config: Config, primary: PrimaryLink): ClusterWorker {
  const logger = createLogger({ level: config.log.level, base: { worker: slot, pid: process.pid } });
  const relay = statusRelayFor(slot, (message) => primary.send(message), systemClock);
  const metrics = createMetrics({ processMetrics: true });
  const clusterMetrics = workerMetrics(
    metrics.registry,
    (message) => primary.send(message),
    undefined,
    () => metrics.wholesalers.status(),
  );
  const dialect = config.database.url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const rateLimiter =
    resolveRateLimitStore(config, { dialect }) === 'memory'
      ? createClusterRateLimiter(budgetsFrom(config), (batch) => primary.send({ channel: CHANNEL, ...batch }))
      : undefined;
  let stop: ((reason: string) => void) | undefined;
  let stopAsked = false;
  primary.onMessage((message) => {
    if (!isGatewayMessage<PrimaryMessage>(message)) return;
    switch (message.type) {
      case 'shutdown':
        stopAsked = true;
        stop?.('asked by the primary');
        return;
      case 'status-change':
      case 'endpoints-in-use':
        relay.receive(message);
        return;
      case 'rate-limit-answers':
        rateLimiter?.receive(message);
        return;
      default:
        clusterMetrics.receive(message);
    }
  });
  // The primary's messages are heard from here on; it holds what it sends until this (supervisor.ts).
  primary.send({ channel: CHANNEL, type: 'joined' });
  return {
    logger,
    startOptions: {
      ...(rateLimiter === undefined ? {} : { rateLimiter }),
      watchStatus: relay.watchStatus,
      metrics: {
        ...metrics,
        exposition: clusterMetrics.exposition,
        wholesalerStatus: clusterMetrics.wholesalerStatus,
      },
      // The primary logs the start-up summary once for all workers.
      summary: false,
    },
    started(server, stopServer) {
      stop = stopServer;
      primary.send({ channel: CHANNEL, type: 'listening', url: server.url });
      if (stopAsked) stop('asked by the primary');
    },
  };
}
