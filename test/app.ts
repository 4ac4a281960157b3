import type { Logger } from 'pino';
import { buildApp, ROUTES } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { KeyMode } from '../src/core/key-mode.js';
import type { AppDeps, RouteRegistration } from '../src/http/app-deps.js';
import type { GatewayApp } from '../src/http/types.js';
import type { AddressPolicy, HostLookup } from '../src/lib/address-policy.js';
import { type Clock, systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/observability/logger.js';
import { createMetrics } from '../src/observability/metrics.js';
import type { Tracing } from '../src/observability/tracing.js';
import { budgetsFrom } from '../src/ratelimit/create.js';
import { createMemoryRateLimiter } from '../src/ratelimit/memory.js';
import type { RateLimiter } from '../src/ratelimit/rate-limiter.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import type { Database } from '../src/store/database.js';
import type { CatalogueEntry } from '../src/wholesalers/catalogue.js';
import { buildDependencies } from '../src/wiring.js';

/**
 * A booted app over a given test database (see `test/db.ts`), built by the server's own wiring
 * (`buildDependencies`, src/wiring.ts) with a silent logger, a private metrics registry and an in-memory
 * rate limiter unless overridden, no status watch, and no periodic job or webhook worker running. `env`
 * sets configuration as environment variables would. The caller closes the app, or calls `close` for the
 * app and what the wiring opened (the database stays the caller's). Without `catalogue` and `sandboxUrl`,
 * wholesaler calls go to the shipped catalogue and a sandbox URL where nothing listens: fine for tests
 * that never call a wholesaler; for those that do, use `startGateway` from `test/gateway.ts` (real mock
 * wholesalers over SOAP).
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
    /** The wholesaler catalogue (default: the shipped one). */
    catalogue?: readonly CatalogueEntry[];
    /** Where `pk_test_` calls go (default: a loopback port where nothing listens). */
    sandboxUrl?: string;
    /** Host name resolution for outbound URL checks, webhook deliveries and custom wholesalers (no DNS). */
    lookup?: HostLookup;
    /** Default: built from the configuration, one for the transports, webhooks and URL checks. */
    addressPolicy?: AddressPolicy;
    tracing?: Tracing;
  } = {},
): Promise<{ app: GatewayApp; deps: AppDeps; close(): Promise<void> }> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', ...overrides.env });
  const { deps, opened } = await buildDependencies(config, {
    database,
    logger: overrides.logger ?? createLogger({ level: 'silent' }),
    clock: overrides.clock ?? systemClock,
    rateLimiter: overrides.rateLimiter ?? createMemoryRateLimiter(budgetsFrom(config)),
    metrics: createMetrics(),
    sandboxUrl: overrides.sandboxUrl ?? 'http://127.0.0.1:9',
    watchStatus: null,
    ...(overrides.catalogue === undefined ? {} : { catalogue: overrides.catalogue }),
    ...(overrides.lookup === undefined ? {} : { lookup: overrides.lookup }),
    ...(overrides.addressPolicy === undefined ? {} : { addressPolicy: overrides.addressPolicy }),
    ...(overrides.tracing === undefined ? {} : { tracing: overrides.tracing }),
  });
  let app: GatewayApp;
  try {
    app = await buildApp(deps, [...ROUTES, ...(overrides.extraRoutes ?? [])]);
  } catch (error) {
    for (const resource of opened) await resource.close().catch(() => {});
    throw error;
  }
  opened.unshift({ name: 'app', close: () => app.close() });
  return {
    app,
    deps,
    async close() {
      for (const resource of opened) await resource.close().catch(() => {});
    },
  };
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
