import type { KeyMode } from '../store/api-key-secret.js';

/** An endpoint the gateway currently calls, as the monitor probes it. */
export interface MonitoredEndpoint {
  wholesaler: string;
  url: string;
  mode: KeyMode;
  /** Custom wholesalers: the owning account (only it is told). */
  accountId?: string;
}

/** `transport.probe` fits: it receives `{ target, url }` and answers `{ up }`. */
export type EndpointProbe = (input: { target: string; wholesaler: string; url: string }) => Promise<{
  up: boolean;
  status?: number;
  error?: { reason?: string; code?: string; message?: string };
}>;

export interface StatusTransition {
  endpoint: MonitoredEndpoint;
  up: boolean;
  reason: string | null;
}

export interface WholesalerMonitor {
  /** Probes every endpoint once now and reports transitions (also what the interval does). */
  check(): Promise<StatusTransition[]>;
  start(): void;
  stop(): Promise<void>;
}

export interface WholesalerMonitorOptions {
  probe: EndpointProbe;
  /** The endpoints in use right now (e.g. those called in the last hour), asked before every round. */
  endpointsInUse: () => MonitoredEndpoint[] | Promise<MonitoredEndpoint[]>;
  intervalMs: number;
  /** Called once per transition; wire it to `recordWholesalerStatusChange`. Errors are the caller's to log. */
  onChange: (transition: StatusTransition) => void | Promise<void>;
}

/**
 * Probes the endpoints in use with a credential-free probe and reports up/down transitions. The first
 * result for an endpoint is its baseline (no event: "up" is the expected state, and a gateway restart
 * should not announce every wholesaler); only a change from the last known state is reported.
 * Endpoints that are no longer in use are forgotten.
 */
export function createWholesalerMonitor(options: WholesalerMonitorOptions): WholesalerMonitor {
  const known = new Map<string, boolean>();
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<StatusTransition[]> | undefined;
  const keyOf = (e: MonitoredEndpoint) =>
    `${e.mode}\u0000${e.accountId ?? ''}\u0000${e.wholesaler}\u0000${e.url}`;

  async function probeAll(): Promise<StatusTransition[]> {
    const endpoints = await options.endpointsInUse();
    const inUse = new Set(endpoints.map(keyOf));
    for (const key of known.keys()) if (!inUse.has(key)) known.delete(key);
    const transitions: StatusTransition[] = [];
    await Promise.all(
      endpoints.map(async (endpoint) => {
        const result = await options
          .probe({ target: endpoint.wholesaler, wholesaler: endpoint.wholesaler, url: endpoint.url })
          .catch((error: unknown) => ({ up: false, error: { message: String(error) } }));
        const key = keyOf(endpoint);
        const before = known.get(key);
        known.set(key, result.up);
        if (before === undefined || before === result.up) return;
        const transition = { endpoint, up: result.up, reason: describe(result) };
        transitions.push(transition);
        await options.onChange(transition);
      }),
    );
    return transitions;
  }

  function check(): Promise<StatusTransition[]> {
    // One round at a time: a slow probe must not overlap the next round.
    round ??= probeAll().finally(() => {
      round = undefined;
    });
    return round;
  }

  return {
    check,
    start() {
      if (timer !== undefined) return;
      timer = setInterval(() => void check().catch(() => {}), options.intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await round?.catch(() => {});
    },
  };
}

function describe(result: Awaited<ReturnType<EndpointProbe>>): string {
  if (result.up) return 'answers again';
  if (result.error?.reason) {
    const reason = result.error.reason.replaceAll('_', ' ');
    return result.error.code ? `${reason}: ${result.error.code}` : reason;
  }
  if (result.status !== undefined) return `HTTP ${result.status}`;
  return result.error?.message ?? 'not reachable';
}
