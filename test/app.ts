import type { Logger } from 'pino';
import { buildApp, ROUTES } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { KeyMode } from '../src/core/key-mode.js';
import type { AppDeps, RouteRegistration } from '../src/http/app-deps.js';
import type { GatewayApp } from '../src/http/types.js';
import { type AddressPolicy, createAddressPolicy, type HostLookup } from '../src/lib/address-policy.js';
import { type Clock, systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/observability/logger.js';
import { createMetrics } from '../src/observability/metrics.js';
import type { Tracing } from '../src/observability/tracing.js';
import { budgetsFrom } from '../src/ratelimit/create.js';
import { createMemoryRateLimiter } from '../src/ratelimit/memory.js';
import type { RateLimiter } from '../src/ratelimit/rate-limiter.js';
import type { UpstreamDeps } from '../src/services/wholesaler-call.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import type { Database } from '../src/store/database.js';
import { createWebhooks, type Webhooks } from '../src/webhooks/service.js';
import { loadCatalogue } from '../src/wholesalers/catalogue.js';
import { createWholesalerStatusFeed, type WholesalerStatusFeed } from '../src/wholesalers/status-feed.js';
import { createUpstream } from '../src/wholesalers/upstream.js';

/**
 * A booted app over a given test database (see `test/db.ts`), with a silent logger, a private metrics
 * registry and an in-memory rate limiter unless overridden. `env` sets configuration as environment
 * variables would. The caller closes the app. Without `upstream`, wholesaler calls go to the shipped
 * catalogue and a sandbox URL where nothing listens: fine for tests that never call a wholesaler; for
 * those that do, use `startGateway` from `test/gateway.ts` (real mock wholesalers over SOAP).
 */
export async function buildTestApp(
  database: Database,
  overrides: {
    env?: NodeJS.ProcessEnv;
    rateLimiter?: RateLimiter;
    logger?: Logger;
    clock?: Clock;
    /** Registered after the production routes. */
    extraRoutes?: RouteRegistration[];
    upstream?: UpstreamDeps;
    wholesalerStatus?: WholesalerStatusFeed;
    webhooks?: Webhooks;
    /** Host name resolution for outbound URL checks and webhook deliveries (instead of DNS). */
    lookup?: HostLookup;
    /** Default: built from the configuration. Pass the one the upstream transports use to share it. */
    addressPolicy?: AddressPolicy;
    tracing?: Tracing;
  } = {},
): Promise<{ app: GatewayApp; deps: AppDeps }> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', ...overrides.env });
  const metrics = createMetrics();
  const outbound = {
    policy: overrides.addressPolicy ?? createAddressPolicy(config.network),
    ...(overrides.lookup === undefined ? {} : { lookup: overrides.lookup }),
  };
  const deps: AppDeps = {
    config,
    database,
    rateLimiter: overrides.rateLimiter ?? createMemoryRateLimiter(budgetsFrom(config)),
    logger: overrides.logger ?? createLogger({ level: 'silent' }),
    clock: overrides.clock ?? systemClock,
    metrics,
    upstream:
      overrides.upstream ??
      createUpstream({
        config,
        db: database.db,
        catalogue: loadCatalogue(),
        sandboxUrl: () => 'http://127.0.0.1:9',
      }).deps,
    wholesalerStatus: overrides.wholesalerStatus ?? createWholesalerStatusFeed(),
    // Not started: tests that want deliveries drain or start `deps.webhooks.worker` and close it.
    webhooks:
      overrides.webhooks ??
      createWebhooks({
        config,
        database,
        clock: overrides.clock ?? systemClock,
        metrics,
        logger: createLogger({ level: 'silent' }),
        version: 'test',
        addressPolicy: outbound.policy,
        lookup: overrides.lookup,
      }),
    outbound,
    ...(overrides.tracing === undefined ? {} : { tracing: overrides.tracing }),
  };
  return { app: await buildApp(deps, [...ROUTES, ...(overrides.extraRoutes ?? [])]), deps };
}

/** A new account with one key; `secret` goes into X-API-Key. */
export async function createTestKey(
  database: Database,
  mode: KeyMode = 'test',
): Promise<{ secret: string; keyId: string; accountId: string }> {
  const account = await createAccount(database.db, systemClock, { name: 'Test pharmacy' });
  const { apiKey, secret } = await createApiKey(database.db, systemClock, {
    accountId: account.id,
    name: 'test',
    mode,
  });
  return { secret, keyId: apiKey.id, accountId: account.id };
}
