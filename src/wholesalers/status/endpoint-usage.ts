import type { KeyMode } from '../../core/key-mode.js';
import type { Clock } from '../../lib/clock.js';
import { type Msv3Endpoint, serviceUrl } from '../../msv3/client.js';
import type { Msv3Version } from '../../msv3/envelope.js';
import { modeOf, type Target } from '../target.js';

/**
 * Which wholesaler endpoints the gateway called recently, so the status monitor probes only those (it
 * has no credentials and no reason to watch a wholesaler nobody uses). One entry per transport target:
 * a wholesaler in one route and, for the sandbox and custom wholesalers, one account (see `Target`;
 * `Upstream.probe` sends one request per URL however many accounts share it).
 */

/** Endpoints not called for this long are no longer probed. */
export const IN_USE_WINDOW_MS = 3_600_000;

export interface EndpointInUse {
  /** The transport target's key (`targetKey`). */
  target: string;
  /** A customer-registered endpoint: probed through the address-restricted transport. */
  custom: boolean;
  /** The id clients use. */
  wholesaler: string;
  mode: KeyMode;
  /** Sandbox and custom wholesalers: the account whose target it is (only it hears about changes). */
  accountId?: string;
  /** What the probe POSTs to: the endpoint's `verbindungTesten` service, which every MSV3 version has. */
  url: string;
  /** The endpoint's MSV3 version: the probe's request is written in it. */
  version: Msv3Version;
}

export interface EndpointUsage {
  /** Notes a call to this endpoint, for `target`, now. */
  record(endpoint: Msv3Endpoint, target: Target): void;
  /** The endpoints called within the window; older ones are forgotten. */
  inUse(): EndpointInUse[];
}

export function createEndpointUsage(options: { clock: Clock; windowMs?: number }): EndpointUsage {
  const windowMs = options.windowMs ?? IN_USE_WINDOW_MS;
  const used = new Map<string, { endpoint: EndpointInUse; at: number }>();
  return {
    record(endpoint, target) {
      const at = options.clock.now();
      const known = used.get(endpoint.target);
      const url = serviceUrl(endpoint, 'verbindungTesten');
      if (known !== undefined && known.endpoint.url === url && known.endpoint.version === endpoint.version) {
        known.at = at;
        return;
      }
      const entry: EndpointInUse = {
        target: endpoint.target,
        custom: target.custom,
        wholesaler: target.wholesaler,
        mode: modeOf(target),
        url,
        version: endpoint.version,
      };
      if (target.accountId !== null) entry.accountId = target.accountId;
      used.set(endpoint.target, { endpoint: entry, at });
    },
    inUse() {
      const since = options.clock.now() - windowMs;
      const out: EndpointInUse[] = [];
      for (const [target, { endpoint, at }] of used) {
        if (at < since) used.delete(target);
        else out.push(endpoint);
      }
      return out;
    },
  };
}
