import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { findCustomWholesaler } from '../store/custom-wholesalers.js';
import type { Tables } from '../store/schema.js';
import { TEST_SUFFIX } from '../wholesalers/registry.js';
import { createWholesalerMonitor, type EndpointProbe, type MonitoredEndpoint } from './monitor.js';
import {
  announceBreakerChanges,
  announceProbeResult,
  createStatusAnnouncer,
  type StatusFeed,
} from './status-events.js';

export interface WholesalerWatchOptions {
  db: Kysely<Tables>;
  clock: Clock;
  /** The webhook worker's wake. */
  wake: () => void;
  logger: { warn(object: object, message: string): void };
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

/**
 * `wholesaler.status_changed` from both sources: the circuit breakers (real calls) and a credential-free
 * probe of the endpoints called in the last hour, every `probeIntervalMs`. One announcer holds one state
 * per wholesaler, mode and account for both, so an event goes out only on a real change.
 */
export function watchWholesalerStatus(options: WholesalerWatchOptions): { stop(): Promise<void> } {
  const { logger, upstream } = options;
  const announcer = createStatusAnnouncer(options);
  const unsubscribe = announceBreakerChanges(options.feed, announcer);
  const monitor = createWholesalerMonitor({
    probe: upstream.probe,
    endpointsInUse: () => withoutDeletedCustom(options.db, upstream.endpointsInUse()),
    intervalMs: options.probeIntervalMs,
    onResult: announceProbeResult(announcer, (endpoint) => upstream.breakerState(endpoint)),
    onError: (err) => logger.warn({ err }, 'wholesaler probe round failed'),
  });
  if (options.probeIntervalMs > 0) monitor.start();
  return {
    async stop() {
      unsubscribe();
      await monitor.stop();
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
