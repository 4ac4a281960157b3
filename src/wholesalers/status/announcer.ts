import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { KeyMode } from '../../core/key-mode.js';
import type { Clock } from '../../lib/clock.js';
import type { Tables } from '../../store/schema.js';
import { recordWholesalerStatusChange } from '../../webhooks/events/record.js';
import type { MonitoredEndpoint, ProbeObservation } from './monitor.js';

export interface StatusReport {
  wholesaler: string;
  mode: KeyMode;
  accountId?: string | null;
  up: boolean;
  reason?: string | null;
}

export interface StatusAnnouncerDeps {
  db: Kysely<Tables>;
  clock: Clock;
  wake?: () => void;
  logger: Logger;
}

/**
 * Turns up/down observations (breaker transitions, probe results) into `wholesaler.status_changed`
 * events, once per real change: one state per wholesaler, mode and account, every endpoint assumed up
 * until seen down, and repeated reports of the same state dropped. Failures to record are logged.
 */
export interface StatusAnnouncer {
  /** Resolves once recorded (never rejects; failures are logged). */
  report(report: StatusReport): Promise<void>;
}

export function createStatusAnnouncer(deps: StatusAnnouncerDeps): StatusAnnouncer {
  const lastAnnounced = new Map<string, boolean>();
  return {
    report(report) {
      const key = `${report.mode}\u0000${report.accountId ?? ''}\u0000${report.wholesaler}`;
      if ((lastAnnounced.get(key) ?? true) === report.up) return Promise.resolve();
      lastAnnounced.set(key, report.up);
      return recordWholesalerStatusChange(
        deps.db,
        {
          wholesaler: report.wholesaler,
          mode: report.mode,
          up: report.up,
          reason: report.reason ?? null,
          ...(report.accountId ? { accountId: report.accountId } : {}),
        },
        { clock: deps.clock, wake: deps.wake },
      ).then(
        () => {},
        (err: unknown) =>
          deps.logger.warn(
            { err, wholesaler: report.wholesaler },
            'recording wholesaler.status_changed failed',
          ),
      );
    },
  };
}

/** The shape of `WholesalerStatusFeed` (src/wholesalers/status/feed.ts) this module needs. */
export interface StatusFeed {
  subscribe(
    listener: (change: {
      wholesaler: string;
      mode: KeyMode;
      accountId: string | null;
      status: 'up' | 'down' | 'recovering';
      cause?: { reason: string; detail?: string };
    }) => void,
  ): () => void;
}

/**
 * Announces the circuit breakers' transitions: open → down, closed → up; half-open (one trial call) is
 * not a change. Returns the unsubscribe function.
 */
export function announceBreakerChanges(feed: StatusFeed, announcer: StatusAnnouncer): () => void {
  return feed.subscribe((change) => {
    if (change.status === 'recovering') return;
    const cause =
      change.cause &&
      [change.cause.reason.replaceAll('_', ' '), change.cause.detail].filter(Boolean).join(': ');
    void announcer.report({
      wholesaler: change.wholesaler,
      mode: change.mode,
      accountId: change.accountId,
      up: change.status === 'up',
      reason: change.status === 'up' ? 'answers again' : cause || null,
    });
  });
}

/**
 * Announces the monitor's probe results through the same announcer as the breakers, so the two never
 * announce one change twice. A probe that finds the endpoint answering does not overrule a circuit
 * opened by failed calls during its cool-down (the front door may answer while the service behind it
 * fails); after the cool-down it does, since nobody may call to close the circuit.
 */
export function announceProbeResult(
  announcer: StatusAnnouncer,
  breakerState: (endpoint: MonitoredEndpoint) => { state: string; retryAfterMs: number },
): (observation: ProbeObservation) => Promise<void> {
  return (observation) => {
    const { endpoint, up, reason } = observation;
    const breaker = breakerState(endpoint);
    if (up && breaker.state === 'open' && breaker.retryAfterMs > 0) return Promise.resolve();
    return announcer.report({
      wholesaler: endpoint.wholesaler,
      mode: endpoint.mode,
      accountId: endpoint.accountId ?? null,
      up,
      reason,
    });
  };
}
