import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { Tables } from '../store/schema.js';
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
    breakerState(target: string): { state: string; retryAfterMs: number };
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
    endpointsInUse: () => upstream.endpointsInUse(),
    intervalMs: options.probeIntervalMs,
    onResult: announceProbeResult(announcer, (target) => upstream.breakerState(target)),
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
