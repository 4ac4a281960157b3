import type { KeyMode } from '../../core/key-mode.js';
import type { Msv3Version } from '../../msv3/envelope.js';

/** An endpoint the gateway currently calls, as the monitor probes it (`Upstream.endpointsInUse`). */
export interface MonitoredEndpoint {
  /** The transport target's key. */
  target: string;
  /** A customer-registered endpoint: probed through the address-restricted transport. */
  custom: boolean;
  wholesaler: string;
  url: string;
  mode: KeyMode;
  /** Custom wholesalers: the owning account (only it is told). */
  accountId?: string;
  /** The endpoint's MSV3 version: the probe sends a `verbindungTesten` request of this version. */
  version: Msv3Version;
}

/** `Upstream.probe` fits: it receives `{ target, custom, url, version }` and answers `{ up }`. */
export type EndpointProbe = (input: {
  target: string;
  custom: boolean;
  url: string;
  version: Msv3Version;
}) => Promise<{
  up: boolean;
  status?: number;
  error?: { reason?: string; code?: string; message?: string };
}>;

type ProbeOutcome = Awaited<ReturnType<EndpointProbe>>;

export interface ProbeObservation {
  endpoint: MonitoredEndpoint;
  up: boolean;
  /** A few words for the event: `answers again`, `unreachable: ECONNREFUSED`, `HTTP 503`. */
  reason: string;
}

export interface WholesalerMonitor {
  /**
   * Probes every endpoint in use once now and reports each result: one round, the periodic job
   * `wholesaler probe round` (src/jobs.ts). A call while a round runs joins it.
   */
  check(): Promise<ProbeObservation[]>;
}

export interface WholesalerMonitorOptions {
  probe: EndpointProbe;
  /** The endpoints in use right now (those called in the last hour), asked before every round. */
  endpointsInUse: () => MonitoredEndpoint[] | Promise<MonitoredEndpoint[]>;
  /**
   * Called with every result. The monitor keeps no state: the status announcer holds the one state per
   * wholesaler, mode and account (shared with the circuit breakers) and announces only changes.
   */
  onResult: (observation: ProbeObservation) => void | Promise<void>;
  /** A failing `onResult`; the round goes on. (A failing `endpointsInUse` fails the round.) */
  onError?: (error: unknown) => void;
}

/**
 * Probes the endpoints in use with a credential-free request, one round per call. An MSV3 server
 * that answers at all below 500 (401 to the anonymous request, typically) or with a SOAP fault is up; a
 * refused connection, a timeout or a proxy's 5xx page is down.
 */
export function createWholesalerMonitor(options: WholesalerMonitorOptions): WholesalerMonitor {
  let round: Promise<ProbeObservation[]> | undefined;
  const onError = options.onError ?? (() => {});

  async function probeAll(): Promise<ProbeObservation[]> {
    const endpoints = await options.endpointsInUse();
    return Promise.all(
      endpoints.map(async (endpoint) => {
        const result: ProbeOutcome = await options
          .probe({
            target: endpoint.target,
            custom: endpoint.custom,
            url: endpoint.url,
            version: endpoint.version,
          })
          .catch((error: unknown) => ({ up: false, error: { message: String(error) } }));
        const observation = { endpoint, up: result.up, reason: describe(result) };
        // Stopped by the gateway's own shutdown: it tells nothing about the wholesaler, so nothing is announced.
        if (result.error?.reason === 'shutdown') return observation;
        await Promise.resolve()
          .then(() => options.onResult(observation))
          .catch(onError);
        return observation;
      }),
    );
  }

  function check(): Promise<ProbeObservation[]> {
    // One round at a time: a slow probe must not overlap the next round.
    round ??= probeAll().finally(() => {
      round = undefined;
    });
    return round;
  }

  return { check };
}

function describe(result: ProbeOutcome): string {
  if (result.up) return 'answers again';
  if (result.status !== undefined) return `HTTP ${result.status}`;
  if (result.error?.reason) {
    const reason = result.error.reason.replaceAll('_', ' ');
    return result.error.code ? `${reason}: ${result.error.code}` : reason;
  }
  return result.error?.message ?? 'not reachable';
}
