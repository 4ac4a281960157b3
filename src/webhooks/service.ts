import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { type AddressPolicy, createAddressPolicy, type HostLookup } from '../lib/address-policy.js';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../observability/metrics.js';
import type { Database } from '../store/database.js';
import { countPendingDeliveries } from '../store/webhook-outbox.js';
import type { DeliverDeps } from './delivery/deliver.js';
import { createWebhookHttpClient } from './delivery/http-client.js';
import { createWebhookMetrics } from './delivery/metrics.js';
import { listenForNotifications } from './delivery/pg-listen.js';
import { createWebhookWorker, type WebhookWorker } from './delivery/worker.js';
import { NOTIFY_CHANNEL } from './events/record.js';

/** What the HTTP routes and the services need of webhooks; `AppDeps.webhooks`. */
export interface Webhooks {
  /** For immediate attempts (test pings, manual retries). */
  deliver: DeliverDeps;
  /** Outbox worker; `server.ts` starts it when WEBHOOK_WORKER_ENABLED. */
  worker: WebhookWorker;
  /** Pass as `wake` to `recordEvent` so this process's worker looks at once. */
  wake(): void;
  /** Lease of a manual attempt, as for the worker's claims. */
  leaseMs: number;
  /** Stops the worker (see `WebhookWorker.stop`) and closes the connections to receivers. */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

export interface CreateWebhooksOptions {
  config: Config;
  database: Database;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  /** The gateway's version, for the User-Agent. */
  version: string;
  /** The gateway's outbound address policy; built from `config.network` when not given. */
  addressPolicy?: AddressPolicy;
  /** Tests: resolve host names without DNS. */
  lookup?: HostLookup;
}

export function createWebhooks(options: CreateWebhooksOptions): Webhooks {
  const { config, database, clock, logger } = options;
  const settings = config.webhooks;
  const client = createWebhookHttpClient({
    timeoutMs: settings.timeoutMs,
    connectTimeoutMs: Math.min(settings.connectTimeoutMs, settings.timeoutMs),
    addressPolicy: options.addressPolicy ?? createAddressPolicy(config.network),
    connectionsPerOrigin: settings.concurrency,
    lookup: options.lookup,
    now: () => clock.now(),
  });
  const deliver: DeliverDeps = {
    db: database.db,
    client,
    clock,
    userAgent: `msv3-gateway-webhooks/${options.version}`,
    metrics: createWebhookMetrics(options.metrics.registry, () => countPendingDeliveries(database.db)),
  };
  const pool = database.pgPool;
  const worker = createWebhookWorker(
    {
      ...deliver,
      dialect: database.dialect,
      logger,
      listen:
        pool === undefined
          ? undefined
          : (onNotify) => listenForNotifications(pool.options, NOTIFY_CHANNEL, onNotify, logger),
    },
    {
      concurrency: settings.concurrency,
      perSubscription: settings.concurrencyPerSubscription,
      pollIntervalMs: settings.pollIntervalMs,
      leaseMs: settings.leaseMs,
    },
  );
  let closing: Promise<void> | undefined;
  return {
    deliver,
    worker,
    wake: worker.wake,
    leaseMs: settings.leaseMs,
    close(closeOptions) {
      closing ??= worker.stop(closeOptions).then(() => client.close());
      return closing;
    },
  };
}
