import type { RateLimitAnswers, RateLimitBatch } from '../ratelimit/cluster.js';
import type { StatusFeed } from '../wholesalers/status/announcer.js';
import type { MonitoredEndpoint } from '../wholesalers/status/monitor.js';

/**
 * What the primary and its workers tell each other over node:cluster's IPC channel. Every message is
 * plain JSON.
 */
export const CHANNEL: 'msv3-gateway' = 'msv3-gateway';

/** A breaker transition, as the status announcer reads it. */
export type StatusChange = Parameters<Parameters<StatusFeed['subscribe']>[0]>[0];

/** One worker's breaker transition, or the endpoints it called in the last hour, for the announcer. */
export type StatusMessage =
  | { channel: typeof CHANNEL; type: 'status-change'; change: StatusChange }
  | { channel: typeof CHANNEL; type: 'endpoints-in-use'; endpoints: MonitoredEndpoint[] };

/**
 * Worker → primary: it hears the primary's messages now (`joined`, sent as it joins the cluster; the
 * primary holds what it would send before); it listens; a status message; a turn's rate-limit asks
 * (src/ratelimit/cluster.ts); a scrape of `GET /metrics` to answer (`metrics-request`);
 * its own series for a round of the primary's (`metrics-part`, prom-client's `getMetricsAsJSON`); the
 * same for the status page's wholesaler view (`wholesalers-request`, `wholesalers-part`).
 */
export type WorkerMessage =
  | { channel: typeof CHANNEL; type: 'joined' }
  | { channel: typeof CHANNEL; type: 'listening'; url: string }
  | StatusMessage
  | (RateLimitBatch & { channel: typeof CHANNEL })
  | { channel: typeof CHANNEL; type: 'metrics-request'; id: number }
  | { channel: typeof CHANNEL; type: 'metrics-part'; id: number; metrics: unknown[] }
  | { channel: typeof CHANNEL; type: 'wholesalers-request'; id: number }
  | { channel: typeof CHANNEL; type: 'wholesalers-part'; id: number; status: unknown };

/**
 * Primary → worker: stop gracefully; another worker's status message (`from`: its slot); the decisions
 * for a batch of rate-limit asks; send your series
 * (`metrics-collect`); the whole cluster's metrics text for a `metrics-request` (`metrics`); send your
 * wholesaler view (`wholesalers-collect`); every worker's view for a `wholesalers-request` (`wholesalers`).
 */
export type PrimaryMessage =
  | { channel: typeof CHANNEL; type: 'shutdown' }
  | (StatusMessage & { from: number })
  | (RateLimitAnswers & { channel: typeof CHANNEL })
  | { channel: typeof CHANNEL; type: 'metrics-collect'; id: number }
  | { channel: typeof CHANNEL; type: 'metrics'; id: number; text?: string; error?: string }
  | { channel: typeof CHANNEL; type: 'wholesalers-collect'; id: number }
  | { channel: typeof CHANNEL; type: 'wholesalers'; id: number; parts: unknown[] };

export function isGatewayMessage<T extends WorkerMessage | PrimaryMessage>(message: unknown): message is T {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { channel?: unknown }).channel === CHANNEL &&
    typeof (message as { type?: unknown }).type === 'string'
  );
}
