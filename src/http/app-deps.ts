import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Outbound } from '../lib/address-policy.js';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { RateLimiter } from '../ratelimit/rate-limiter.js';
import type { ConnectionTestDeps } from '../services/connection-test.js';
import type { DeliveryDeps } from '../services/deliveries/notices.js';
import type { OrderDeps } from '../services/orders/state.js';
import type { SandboxControlDeps } from '../services/sandbox-controls.js';
import type { Database } from '../store/database.js';
import type { DeliverDeps } from '../webhooks/delivery/deliver.js';
import type { Webhooks } from '../webhooks/service.js';
import type { SubscriptionDeps } from '../webhooks/subscriptions/service.js';
import type { UpstreamDeps } from '../wholesalers/call.js';
import type { CustomWholesalerDeps } from '../wholesalers/custom.js';
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
  /** What each service is given, built once in src/wiring.ts (`buildServiceDeps`); routes pass it on. */
  services: ServiceDeps;
}

/** The services' dependencies, one object per service family. */
export interface ServiceDeps {
  orders: OrderDeps;
  deliveries: DeliveryDeps;
  /** Documents: the wholesaler call, and the delivery notices seen, for a file name. */
  documents: Pick<DeliveryDeps, 'upstream' | 'db'>;
  connection: ConnectionTestDeps;
  customWholesalers: CustomWholesalerDeps;
  subscriptions: SubscriptionDeps;
  /** Test events and redeliveries: one attempt now, leased like the worker's claims. */
  attempts: DeliverDeps & { leaseMs: number };
  /** The API's test helpers (`/v1/test_helpers/...`). */
  sandbox: SandboxControlDeps;
}

/** A route module: `registerXRoutes(app, deps)` in `src/http/routes/<resource>.ts`. */
export type RouteRegistration = (app: GatewayApp, deps: AppDeps) => void;
