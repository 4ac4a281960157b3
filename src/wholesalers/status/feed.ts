import type { KeyMode } from '../../core/key-mode.js';
import type { BreakerChange, BreakerState } from '../../msv3/transport.js';
import { modeOf, type Route, type Target } from '../target.js';

/**
 * Wholesaler up/down changes, as seen by the circuit breakers of the transports. The server feeds every
 * breaker transition in (`publish` is the transports' `onBreakerChange`); subscribers, such as the
 * webhook dispatcher that emits `wholesaler.status_changed`, get them with the wholesaler id the
 * clients use. Listeners run synchronously and must not throw (errors are swallowed so a faulty
 * listener cannot break a wholesaler call).
 */

type WholesalerStatus = 'up' | 'down' | 'recovering';

export interface WholesalerStatusChange {
  /** The id clients use (`phoenix`, `phoenix_test`, `custom-…`). */
  wholesaler: string;
  route: Route;
  /** Which keys can see it: sandbox and test servers are test mode. */
  mode: KeyMode;
  /**
   * The one account whose circuit changed: the sandbox (one circuit per account) and custom endpoints;
   * null for real catalogue servers, whose circuit every account shares.
   */
  accountId: string | null;
  /** closed → `up`, open → `down`, half_open (one trial call let through) → `recovering`. */
  status: WholesalerStatus;
  previousStatus: WholesalerStatus;
  /** Epoch ms. */
  at: number;
  /** Why it went down (no credentials or bodies: the upstream error's reason and short detail). */
  cause?: { reason: string; detail?: string };
}

export interface WholesalerStatusFeed {
  /** Returns the unsubscribe function. */
  subscribe(listener: (change: WholesalerStatusChange) => void): () => void;
  /** A breaker change of `target` (the transports report its key; `createUpstream` adds the target). */
  publish(change: BreakerChange & { about: Target }): void;
  /**
   * A change the gateway made itself rather than observed: a test helper taking a sandbox wholesaler
   * down or up (`services/sandbox-controls.ts`). Goes to the same listeners, so the one announcer decides.
   */
  announce(change: WholesalerStatusChange): void;
}

const STATUS: Record<BreakerState, WholesalerStatus> = {
  closed: 'up',
  open: 'down',
  half_open: 'recovering',
};

export function createWholesalerStatusFeed(): WholesalerStatusFeed {
  const listeners = new Set<(change: WholesalerStatusChange) => void>();
  const tell = (event: WholesalerStatusChange) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // See the module comment: a listener must not break the call that changed the state.
      }
    }
  };
  return {
    announce: tell,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(change) {
      if (listeners.size === 0) return;
      const event: WholesalerStatusChange = {
        wholesaler: change.about.wholesaler,
        route: change.about.route,
        mode: modeOf(change.about),
        accountId: change.about.accountId,
        status: STATUS[change.to],
        previousStatus: STATUS[change.from],
        at: change.at,
      };
      if (change.lastError !== undefined) event.cause = causeOf(change.lastError);
      tell(event);
    },
  };
}

function causeOf(error: NonNullable<BreakerChange['lastError']>): { reason: string; detail?: string } {
  switch (error.reason) {
    case 'unreachable':
      return { reason: error.reason, detail: error.code };
    case 'timeout':
      return { reason: error.reason, detail: `${error.phase} timeout after ${error.timeoutMs} ms` };
    case 'http_status':
    case 'soap_fault':
    case 'decode':
    case 'too_large':
    case 'credentials_rejected':
      return { reason: error.reason, detail: `HTTP ${error.status}` };
    default:
      return { reason: error.reason };
  }
}
