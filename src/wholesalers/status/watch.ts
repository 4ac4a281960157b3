import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.js';
import type { PeriodicJob } from '../../lib/periodic.js';
import { findCustomWholesaler } from '../../store/custom-wholesalers.js';
import type { Tables } from '../../store/schema.js';
import { TEST_SUFFIX } from '../registry.js';
import {
  announceBreakerChanges,
  announceProbeResult,
  createStatusAnnouncer,
  type StatusFeed,
} from './announcer.js';
import { createWholesalerMonitor, type EndpointProbe, type MonitoredEndpoint } from './monitor.js';

export interface WholesalerWatchOptions {
  db: Kysely<Tables>;
  clock: Clock;
  /** The webhook worker's wake. */
  wake: () => void;
  logger: Logger;
  /** Breaker transitions of the transports (`WholesalerStatusFeed`). */
  feed: StatusFeed;
  /** `createUpstream(...)`: the endpoints in use, the probe and the breakers, per transport target. */
  upstream: {
    endpointsInUse(): MonitoredEndpoint[];
    probe: EndpointProbe;
    breakerState(endpoint: MonitoredEndpoint): { state: string; retryAfterMs: number };
  };
  /** WHOLESALER_PROBE_INTERVAL_MS; 0: breakers only, no probes. */
  probeIntervalMs: number;
}

/** A running watch: its periodic jobs are scheduled by the caller (src/jobs.ts), not by the watch. */
export interface WholesalerWatch {
  /** The probe rounds (none when the probes are off); the caller schedules them and stops them first. */
  jobs: PeriodicJob[];
  /** Stops listening to the breakers. */
  stop(): Promise<void>;
}

/** `watchWholesalerStatus`, or the cluster's relay of it (src/cluster/status-relay.ts). */
export type WatchStatus = (options: WholesalerWatchOptions) => WholesalerWatch;

/**
 * `wholesaler.status_changed` from both sources: the circuit breakers (real calls) and a credential-free
 * probe of the endpoints called in the last hour, every `probeIntervalMs` (the job in `jobs`). One
 * announcer holds one state per wholesaler, mode and account for both, so an event goes out only on a
 * real change.
 */
export function watchWholesalerStatus(options: WholesalerWatchOptions): WholesalerWatch {
  const { logger, upstream } = options;
  const announcer = createStatusAnnouncer(options);
  const unsubscribe = announceBreakerChanges(options.feed, announcer);
  const monitor = createWholesalerMonitor({
    probe: upstream.probe,
    endpointsInUse: () => withoutDeletedCustom(options.db, upstream.endpointsInUse()),
    onResult: announceProbeResult(announcer, (endpoint) => upstream.breakerState(endpoint)),
    onError: (err) => logger.warn({ err }, 'wholesaler probe round failed'),
  });
  return {
    // A failed round is logged as `wholesaler probe round failed`, as a failed report within one.
    jobs:
      options.probeIntervalMs > 0
        ? [{ name: 'wholesaler probe round', intervalMs: options.probeIntervalMs, run: monitor.check }]
        : [],
    async stop() {
      unsubscribe();
    },
  };
}

/**
 * The endpoints in use, less customer-registered ones whose registration is gone: a deleted custom
 * wholesaler stays in the in-use list for up to an hour after its last call, and must neither be probed
 * nor announced meanwhile. Asked of the database every round, so it holds for every gateway process by
 * its next round, whichever process the deletion went through.
 */
async function withoutDeletedCustom(
  db: Kysely<Tables>,
  endpoints: readonly MonitoredEndpoint[],
): Promise<MonitoredEndpoint[]> {
  const registered = await Promise.all(
    endpoints.map(async ({ custom, wholesaler, mode, accountId }) => {
      if (!custom || accountId === undefined) return true;
      const id = wholesaler.endsWith(TEST_SUFFIX) ? wholesaler.slice(0, -TEST_SUFFIX.length) : wholesaler;
      return (await findCustomWholesaler(db, { accountId, mode }, id)) !== undefined;
    }),
  );
  return endpoints.filter((_, i) => registered[i]);
}
