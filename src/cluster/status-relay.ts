import type { Clock } from '../lib/clock.js';
import type { StatusFeed } from '../wholesalers/status/announcer.js';
import type { MonitoredEndpoint } from '../wholesalers/status/monitor.js';
import { type WatchStatus, watchWholesalerStatus } from '../wholesalers/status/watch.js';
import { CHANNEL, type PrimaryMessage, type StatusMessage } from './messages.js';

/**
 * `wholesaler.status_changed` in a cluster. Each worker has its own circuit breakers and knows only the
 * endpoints it called itself; announcing from every worker would send one change up to WORKERS times
 * and probe each endpoint WORKERS times. So one worker, the announcer (slot 1), runs the one status
 * announcer and the probes: the others forward their breaker transitions at once and the endpoints they
 * called in the last hour every probe interval (through the primary), and the announcer treats them as
 * its own. While the announcer is down (restarting), forwarded messages are lost; its own probes catch
 * up with a change that persists.
 */

export const ANNOUNCER_SLOT = 1;

export interface StatusRelay {
  /** `StartServerOptions.watchStatus` (the wiring's `watchStatus`). */
  watchStatus: WatchStatus;
  /** Another worker's forwarded message (only the announcer gets them). */
  receive(message: PrimaryMessage & StatusMessage): void;
}

/** The relay of the worker in `slot`; `send` reaches the primary. */
export function statusRelayFor(
  slot: number,
  send: (message: StatusMessage) => void,
  clock: Clock,
): StatusRelay {
  return slot === ANNOUNCER_SLOT ? announcer(clock) : forwarder(send);
}

function forwarder(send: (message: StatusMessage) => void): StatusRelay {
  return {
    watchStatus(options) {
      const unsubscribe = options.feed.subscribe((change) =>
        send({ channel: CHANNEL, type: 'status-change', change }),
      );
      return {
        // Scheduled with the process's other periodic jobs (src/jobs.ts), every probe interval.
        jobs:
          options.probeIntervalMs > 0
            ? [
                {
                  name: 'forwarding the endpoints in use',
                  intervalMs: options.probeIntervalMs,
                  run: () =>
                    send({
                      channel: CHANNEL,
                      type: 'endpoints-in-use',
                      endpoints: options.upstream.endpointsInUse(),
                    }),
                },
              ]
            : [],
        async stop() {
          unsubscribe();
        },
      };
    },
    receive() {},
  };
}

function announcer(clock: Clock): StatusRelay {
  type Listener = Parameters<StatusFeed['subscribe']>[0];
  const listeners = new Set<Listener>();
  /** The latest list of each other worker; one not renewed for three intervals is a gone worker's. */
  const reported = new Map<number, { endpoints: MonitoredEndpoint[]; at: number }>();
  let maxAgeMs = 0;
  return {
    receive(message) {
      if (message.type === 'status-change') {
        for (const listener of listeners) listener(message.change);
      } else {
        reported.set(message.from, { endpoints: message.endpoints, at: clock.now() });
      }
    },
    watchStatus(options) {
      maxAgeMs = 3 * options.probeIntervalMs;
      const feed: StatusFeed = {
        subscribe(listener) {
          const unsubscribe = options.feed.subscribe(listener);
          listeners.add(listener);
          return () => {
            unsubscribe();
            listeners.delete(listener);
          };
        },
      };
      const endpointsInUse = () => {
        const byTarget = new Map(options.upstream.endpointsInUse().map((e) => [e.target, e]));
        for (const [from, report] of reported) {
          if (clock.now() - report.at > maxAgeMs) reported.delete(from);
          else for (const e of report.endpoints) if (!byTarget.has(e.target)) byTarget.set(e.target, e);
        }
        return [...byTarget.values()];
      };
      return watchWholesalerStatus({
        ...options,
        feed,
        upstream: {
          endpointsInUse,
          probe: (input) => options.upstream.probe(input),
          breakerState: (endpoint) => options.upstream.breakerState(endpoint),
        },
      });
    },
  };
}
