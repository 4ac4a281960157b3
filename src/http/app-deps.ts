import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Outbound } from '../lib/address-policy.js';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { RateLimiter } from '../ratelimit/rate-limiter.js';
import type { UpstreamDeps } from '../services/wholesaler-call.js';
import type { Database } from '../store/database.js';
import type { Webhooks } from '../webhooks/service.js';
import type { WholesalerStatusFeed } from '../wholesalers/status/feed.js';
import type { GatewayApp } from './types.js';

/**
 * Everything the HTTP app uses, passed in. The caller creates and closes these; `app.close()` only
 * stops HTTP. Add a field here when a capability needs one (e.g. `wholesalers`, `upstream`, `webhooks`).
 */
export interface AppDeps {
  config: Config;
  database: Database;
  rateLimiter: RateLimiter;
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  /** Wholesaler registry (catalogue + custom, sandbox routing), MSV3 clients, clientSoftwareKennung. */
  upstream: UpstreamDeps;
  /** Up/down changes of wholesaler endpoints (circuit breakers), e.g. for `wholesaler.status_changed`. */
  wholesalerStatus: WholesalerStatusFeed;
  /** Webhook delivery (worker, HTTP client); pass `webhooks.wake` to `recordEvent`. */
  webhooks: Webhooks;
  /** The outbound address policy (the same object the transports and webhooks use) for URL checks. */
  outbound: Outbound;
  /** A server span per request (docs/tracing.md); absent: `NO_TRACING`, no hooks at all. */
  tracing?: Tracing;
}

/** A route module: `registerXRoutes(app, deps)` in `src/http/routes/<resource>.ts`. */
export type RouteRegistration = (app: GatewayApp, deps: AppDeps) => void;
