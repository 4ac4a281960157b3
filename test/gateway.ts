import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import type { KeyMode } from '../src/core/key-mode.js';
import type { AppDeps, RouteRegistration } from '../src/http/app-deps.js';
import type { GatewayApp } from '../src/http/types.js';
import type { HostLookup } from '../src/lib/address-policy.js';
import { type Clock, systemClock } from '../src/lib/clock.js';
import type { MockWholesaler, MockWholesalerOptions } from '../src/mock/index.js';
import { startMockWholesaler } from '../src/mock/index.js';
import type { Tracing } from '../src/observability/tracing.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { type CatalogueEntry, parseCatalogue } from '../src/wholesalers/catalogue.js';
import { sandboxTenant } from '../src/wholesalers/registry.js';
import type { WholesalerStatusChange } from '../src/wholesalers/status/feed.js';
import { buildTestApp } from './app.js';
import { closedLoopbackUrl } from './closed-port.js';
import type { TestDatabase } from './db.js';

/**
 * The end-to-end harness for wholesaler endpoints: the real app, real transports and registry, and real
 * mock wholesalers over real SOAP on loopback. One `startGateway` per test file (or per `describe`).
 *
 * ```ts
 * describeEachDialect('POST /v1/availability', (getDatabase) => {
 *   let gw: Gateway;
 *   beforeAll(async () => { gw = await startGateway({ database: getDatabase() }); });
 *   afterAll(() => gw.close());
 *
 *   it('answers from the sandbox', async () => {
 *     const response = await gw.inject({
 *       method: 'POST', url: '/v1/availability',
 *       body: { wholesaler: 'phoenix', items: [{ pzn: '4114918', quantity: 3 }] },
 *     });                                      // X-API-Key: gw.keys.test, X-MSV3-*: TEST_CREDENTIALS
 *     expect(response.statusCode).toBe(200);
 *     expect(gw.mocks.sandbox.requestCount('verfuegbarkeitAnfragen')).toBe(1);
 *   });
 * });
 * ```
 *
 * What it sets up:
 * - Three mock wholesalers (`startMockWholesaler`, sandbox mode: any customer id and password except the
 *   scenario passwords): `mocks.sandbox` is the built-in sandbox (test keys, plain ids), `mocks.testServer`
 *   plays the wholesalers' own test servers (`<id>_test`), `mocks.live` their live servers (live keys).
 *   `mockOptions.<which>` overrides their options (e.g. `{ slowAnswerMs: 500 }`, fixed `credentials`).
 * - The test catalogue `TEST_CATALOGUE` pointing at them (`phoenix` v2 and `gehe` v1 with test and live
 *   servers, `aep` v2 sandbox-only, `offline` v2 whose live server is a closed port), or your own:
 *   `catalogue: (mocks) => [...]`. Tenants: `sandbox/<id>` (as the registry routes), `test/<id>`, `live/<id>`.
 * - An account with a test key and a live key (`keys.test`, `keys.live`); `createKey(mode)` makes a key
 *   in a new account (another pharmacy).
 * - Wholesaler status changes (circuit breakers) collected in `statusChanges`.
 * - `env`: configuration as environment variables (`UPSTREAM_HEADERS_TIMEOUT_MS`, `ALLOW_PRIVATE_ENDPOINTS`,
 *   `BREAKER_FAILURE_THRESHOLD` …). Defaults here: a breaker threshold of 1000 (scenario faults must not
 *   open circuits for later tests) and generous rate limits.
 *
 * `inject` sends with `X-API-Key: keys.test` and `X-MSV3-Username/Password: TEST_CREDENTIALS` unless
 * told otherwise (`key: 'live'`, a key secret, or null; `credentials: null` or other credentials).
 * `fetch` does the same over a real socket (the app listens on the first call). `close` disposes of the
 * app, transports and mocks; the database belongs to the caller.
 */

export const TEST_CREDENTIALS = { username: 'apotheke1', password: 'sandbox-secret' } as const;

export interface Mocks {
  sandbox: MockWholesaler;
  testServer: MockWholesaler;
  live: MockWholesaler;
}

export interface TestKey {
  secret: string;
  accountId: string;
  mode: KeyMode;
}

export interface GatewayOptions {
  database: TestDatabase;
  env?: NodeJS.ProcessEnv;
  catalogue?: (mocks: Mocks, closedPortUrl: string) => CatalogueEntry[];
  mockOptions?: Partial<Record<keyof Mocks, MockWholesalerOptions>>;
  clock?: Clock;
  logger?: Logger;
  /** Host name resolution instead of DNS: URL checks, webhook deliveries and custom wholesaler calls. */
  lookup?: HostLookup;
  extraRoutes?: RouteRegistration[];
  /** Spans for requests and wholesaler calls (`startTracing`); the caller closes it. */
  tracing?: Tracing;
}

export interface GatewayRequest {
  method?: InjectOptions['method'];
  url: string;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
  /** `test` (default), `live`, a key secret, or null for no X-API-Key. */
  key?: 'test' | 'live' | string | null;
  /** Default TEST_CREDENTIALS; null sends no X-MSV3-* headers. */
  credentials?: { username: string; password: string } | null;
}

export interface Gateway {
  app: GatewayApp;
  deps: AppDeps;
  database: TestDatabase;
  mocks: Mocks;
  catalogue: CatalogueEntry[];
  /** A URL on 127.0.0.1 where nothing listens (for "unreachable"). */
  closedPortUrl: string;
  keys: { test: TestKey; live: TestKey };
  statusChanges: WholesalerStatusChange[];
  createKey(mode: KeyMode): Promise<TestKey>;
  /** The sandbox mock's tenant of an account's calls to `wholesaler` (default: the test key's account). */
  sandboxTenant(wholesaler: string, key?: TestKey): string;
  inject(request: GatewayRequest): Promise<LightMyRequestResponse>;
  fetch(request: GatewayRequest): Promise<Response>;
  close(): Promise<void>;
}

/** phoenix (v2) and gehe (v1) with test and live servers; aep sandbox-only; offline's live server is down. */
export function TEST_CATALOGUE(mocks: Mocks, closedPortUrl: string): CatalogueEntry[] {
  const server = (mock: MockWholesaler, tenant: string, version: 1 | 2) => ({
    baseUrl: mock.baseUrl({ tenant, version }),
  });
  return parseCatalogue({
    wholesalers: [
      {
        id: 'phoenix',
        name: 'PHOENIX (test catalogue)',
        version: 2,
        test: server(mocks.testServer, 'test/phoenix', 2),
        live: server(mocks.live, 'live/phoenix', 2),
      },
      {
        id: 'gehe',
        name: 'GEHE (test catalogue)',
        version: 1,
        test: server(mocks.testServer, 'test/gehe', 1),
        live: server(mocks.live, 'live/gehe', 1),
      },
      { id: 'aep', name: 'AEP (test catalogue)', version: 2 },
      {
        id: 'offline',
        name: 'Offline (test catalogue)',
        version: 2,
        live: { baseUrl: `${closedPortUrl}/msv3/v2.0` },
      },
    ],
  });
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  // Closed newest first: the app and what the wiring opened (transports, webhooks), then the mocks.
  const started: { close(): Promise<unknown> }[] = [];
  try {
    const mocks: Mocks = {
      sandbox: await startMockWholesaler(options.mockOptions?.sandbox ?? {}),
      testServer: await startMockWholesaler(options.mockOptions?.testServer ?? {}),
      live: await startMockWholesaler(options.mockOptions?.live ?? {}),
    };
    started.unshift(mocks.sandbox, mocks.testServer, mocks.live);
    const closedPortUrl = await closedLoopbackUrl();
    const catalogue = (options.catalogue ?? TEST_CATALOGUE)(mocks, closedPortUrl);
    const env: NodeJS.ProcessEnv = {
      BREAKER_FAILURE_THRESHOLD: '1000',
      RATE_LIMIT_TEST_POINTS: '10000',
      RATE_LIMIT_LIVE_POINTS: '10000',
      ...options.env,
    };
    // The server's wiring (src/wiring.ts) builds the transports, webhooks and app around the mocks.
    const { app, deps, close } = await buildTestApp(options.database, {
      env,
      catalogue,
      sandboxUrl: mocks.sandbox.url,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      ...(options.extraRoutes === undefined ? {} : { extraRoutes: options.extraRoutes }),
      ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
    });
    started.unshift({ close });
    const statusChanges: WholesalerStatusChange[] = [];
    deps.wholesalerStatus.subscribe((change) => statusChanges.push(change));

    const createKey = (mode: KeyMode, accountId?: string) => newKey(options.database, mode, accountId);
    const test = await createKey('test');
    const live = await createKey('live', test.accountId);
    const keys = { test, live };
    let listening: Promise<string> | undefined;

    const headersFor = (request: GatewayRequest): Record<string, string> => {
      const headers: Record<string, string> = { ...request.headers };
      const key = request.key === undefined ? 'test' : request.key;
      if (key !== null) headers['x-api-key'] = key === 'test' || key === 'live' ? keys[key].secret : key;
      const credentials = request.credentials === undefined ? TEST_CREDENTIALS : request.credentials;
      if (credentials !== null) {
        headers['x-msv3-username'] = credentials.username;
        headers['x-msv3-password'] = credentials.password;
      }
      if (request.body !== undefined) headers['content-type'] ??= 'application/json';
      return headers;
    };

    return {
      app,
      deps,
      database: options.database,
      mocks,
      catalogue,
      closedPortUrl,
      keys,
      statusChanges,
      createKey: (mode) => createKey(mode),
      sandboxTenant: (wholesaler, key) => sandboxTenant((key ?? keys.test).accountId, wholesaler),
      inject: (request) =>
        app.inject({
          method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
          url: request.url,
          ...(request.query === undefined ? {} : { query: request.query }),
          headers: headersFor(request),
          ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
        }),
      async fetch(request) {
        listening ??= app.listen({ host: '127.0.0.1', port: 0 });
        const base = await listening;
        const query = request.query === undefined ? '' : `?${new URLSearchParams(request.query)}`;
        return fetch(`${base}${request.url}${query}`, {
          method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
          headers: headersFor(request),
          ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        });
      },
      async close() {
        for (const resource of started) await resource.close().catch(() => {});
      },
    };
  } catch (error) {
    for (const resource of started) await resource.close().catch(() => {});
    throw error;
  }
}

async function newKey(database: TestDatabase, mode: KeyMode, accountId?: string): Promise<TestKey> {
  const account = accountId ?? (await createAccount(database.db, systemClock, { name: 'Test pharmacy' })).id;
  const { secret } = await createApiKey(database.db, systemClock, { accountId: account, name: mode, mode });
  return { secret, accountId: account, mode };
}
