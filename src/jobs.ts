import type { Config } from './config.js';
import type { Clock } from './lib/clock.js';
import type { PeriodicJob } from './lib/periodic.js';
import type { Database } from './store/database.js';
import { purgeExpiredIdempotencyKeys } from './store/idempotency.js';
import { pruneWebhookHistory } from './store/webhook-outbox.js';

const DAY_MS = 86_400_000;

/**
 * Every periodic job of a gateway process, each with its interval from the configuration; the wiring
 * (src/wiring.ts) schedules them together with `schedulePeriodicJobs` (src/lib/periodic.ts), the server
 * starts them once it listens and stops them on shutdown. A new periodic job belongs in this list, not
 * in a timer of its own.
 */
export function periodicJobs(options: {
  config: Config;
  database: Database;
  clock: Clock;
  /** The status watch's jobs: the wholesaler probe rounds (or a cluster worker's forwarding). */
  statusJobs: readonly PeriodicJob[];
}): PeriodicJob[] {
  const { config, clock } = options;
  const { db } = options.database;
  const retentionMs = config.webhooks.retentionDays * DAY_MS;
  return [
    {
      name: 'purging expired idempotency keys',
      intervalMs: config.idempotency.purgeIntervalMs,
      run: () => purgeExpiredIdempotencyKeys(db, clock),
    },
    // The processes that deliver webhooks keep their history trimmed (WEBHOOK_WORKER_ENABLED).
    ...(config.webhooks.workerEnabled
      ? [
          {
            name: 'pruning webhook history',
            intervalMs: config.webhooks.pruneIntervalMs,
            run: () => pruneWebhookHistory(db, clock.now() - retentionMs),
          },
        ]
      : []),
    ...options.statusJobs,
  ];
}
