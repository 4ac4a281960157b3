import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteRegistration } from '../src/http/app-deps.js';
import { msv3Credentials } from '../src/http/msv3-credentials.js';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { lieferavisAbfrageNeu } from '../src/msv3/operations/lieferavis-abfrage-neu.js';
import { callWholesaler } from '../src/wholesalers/call.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './db.js';
import { type Gateway, type GatewayRequest, type Mocks, startGateway, TEST_CREDENTIALS } from './gateway.js';

/** Every wholesaler endpoint of issue #4's core, with the MSV3 operation it must reach. */
const ENDPOINTS: { name: string; operation: string; request: (wholesaler: string) => GatewayRequest }[] = [
  {
    name: 'POST /v1/connection/test',
    operation: 'verbindungTesten',
    request: (wholesaler) => ({ url: '/v1/connection/test', body: { wholesaler } }),
  },
  {
    name: 'POST /v1/availability',
    operation: 'verfuegbarkeitAnfragen',
    request: (wholesaler) => ({
      url: '/v1/availability',
      body: { wholesaler, items: [{ pzn: '4114918', quantity: 1 }] },
    }),
  },
  {
    name: 'POST /v1/availability/bulk',
    operation: 'verfuegbarkeitAnfragenBulk',
    request: (wholesaler) => ({ url: '/v1/availability/bulk', body: { wholesaler, pzns: ['4114918'] } }),
  },
  {
    name: 'GET /v1/contracts',
    operation: 'vertragsdatenAbfragen',
    request: (wholesaler) => ({ url: '/v1/contracts', query: { wholesaler } }),
  },
];

/** A probe route calling a v2-only operation, to prove the version check of the shared call helper. */
const deliveriesProbe: RouteRegistration = (app, deps) => {
  app.get<{ Querystring: { wholesaler: string } }>('/test/new-deliveries', async (request) => {
    const wholesaler = await deps.upstream.registry.resolve(request.auth, request.query.wholesaler);
    const { value } = await callWholesaler(
      deps.upstream,
      wholesaler,
      lieferavisAbfrageNeu,
      msv3Credentials(request),
      {
        clientSoftwareId: deps.upstream.clientSoftwareId,
      },
    );
    return { notices: value.notices.length };
  });
};

describeEachDialect('sandbox routing (docs/wholesalers.md "Routing") for every endpoint', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase(), extraRoutes: [deliveriesProbe] });
  });
  afterAll(() => gw.close());

  /** Runs the request and returns which mock(s) received the operation. */
  async function reached(request: GatewayRequest, operation: string): Promise<(keyof Mocks)[]> {
    const names = Object.keys(gw.mocks) as (keyof Mocks)[];
    const before = names.map((n) => gw.mocks[n].requestCount(operation));
    const response = await gw.inject(request);
    expect(response.statusCode, response.body).toBe(200);
    return names.filter((n, i) => gw.mocks[n].requestCount(operation) > before[i]!);
  }

  for (const endpoint of ENDPOINTS) {
    describe(endpoint.name, () => {
      it('sends a test key with a plain id to the built-in sandbox', async () => {
        expect(await reached(endpoint.request('phoenix'), endpoint.operation)).toEqual(['sandbox']);
        expect(await reached(endpoint.request('aep'), endpoint.operation)).toEqual(['sandbox']);
      });

      it("sends a test key with `<id>_test` to that wholesaler's test server", async () => {
        expect(await reached(endpoint.request('phoenix_test'), endpoint.operation)).toEqual(['testServer']);
        expect(await reached(endpoint.request('gehe_test'), endpoint.operation)).toEqual(['testServer']);
      });

      it("sends a live key to the wholesaler's live server", async () => {
        expect(await reached({ ...endpoint.request('phoenix'), key: 'live' }, endpoint.operation)).toEqual([
          'live',
        ]);
        expect(await reached({ ...endpoint.request('gehe'), key: 'live' }, endpoint.operation)).toEqual([
          'live',
        ]);
      });
    });
  }

  it('answers 422 operation_not_supported for a v2-only operation on a v1 wholesaler, without a SOAP call', async () => {
    const before = gw.mocks.sandbox.requestCount();
    const response = await gw.inject({ url: '/test/new-deliveries', query: { wholesaler: 'gehe' } });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({
      error: 'operation_not_supported',
      error_code: '1300',
      wholesaler: 'gehe',
      message: expect.stringContaining('lieferavisAbfrageNeu'),
    });
    expect(gw.mocks.sandbox.requestCount()).toBe(before);
    const v2 = await gw.inject({ url: '/test/new-deliveries', query: { wholesaler: 'phoenix' } });
    expect(v2.statusCode).toBe(200);
  });
});

/** A route of docs/wholesalers.md "Routing": which key and wholesaler id, and where the SOAP call must land. */
interface Route {
  name: string;
  key: 'test' | 'live';
  wholesaler: string;
  mock: keyof Mocks;
  /** The mock's tenant; '' for the sandbox, which keeps one per account (`tenantOf`). */
  tenant: string;
  msv3: 1 | 2;
}

const SANDBOX_PHOENIX: Route = {
  name: 'a test key with a plain id → the built-in sandbox',
  key: 'test',
  wholesaler: 'phoenix',
  mock: 'sandbox',
  tenant: '',
  msv3: 2,
};
const SANDBOX_AEP: Route = {
  name: 'a test key with a sandbox-only id → the built-in sandbox',
  key: 'test',
  wholesaler: 'aep',
  mock: 'sandbox',
  tenant: '',
  msv3: 2,
};
const TEST_SERVER_PHOENIX: Route = {
  name: "a test key with `<id>_test` → that wholesaler's test server",
  key: 'test',
  wholesaler: 'phoenix_test',
  mock: 'testServer',
  tenant: 'test/phoenix',
  msv3: 2,
};
const LIVE_PHOENIX: Route = {
  name: "a live key → the wholesaler's live server",
  key: 'live',
  wholesaler: 'phoenix',
  mock: 'live',
  tenant: 'live/phoenix',
  msv3: 2,
};
/** MSV3 v2 (phoenix, aep): every endpoint. */
const V2_ROUTES = [SANDBOX_PHOENIX, SANDBOX_AEP, TEST_SERVER_PHOENIX, LIVE_PHOENIX];
/** MSV3 v1 (gehe): orders, status, dry run and take-back offers exist in v1 too. */
const V1_ROUTES: Route[] = [
  { ...SANDBOX_PHOENIX, wholesaler: 'gehe', msv3: 1 },
  { ...TEST_SERVER_PHOENIX, wholesaler: 'gehe_test', tenant: 'test/gehe', msv3: 1 },
  { ...LIVE_PHOENIX, wholesaler: 'gehe', tenant: 'live/gehe', msv3: 1 },
];

/** What an endpoint needs on the route's mock: an order placed through the gateway, (v2) its notice. */
interface Seed {
  orderId: string;
  notice?: { tracking_number: string; barcode: string; document_id: string };
}

async function noticeOf(seed: () => Promise<Seed>): Promise<NonNullable<Seed['notice']>> {
  const { notice } = await seed();
  if (notice === undefined) throw new Error('MSV3 v1 has no delivery notices');
  return notice;
}

/**
 * The endpoints that need state at the wholesaler (an order, a delivery notice, a document), each with the
 * MSV3 operations it must send to the route's mock and no other (`absent`: sent to no mock at all).
 */
const STATEFUL_ENDPOINTS: {
  name: string;
  operations: string[];
  absent?: string[];
  routes: Route[];
  request: (route: Route, seed: () => Promise<Seed>) => Promise<GatewayRequest>;
}[] = [
  {
    name: 'POST /v1/orders',
    operations: ['bestellen'],
    routes: [...V2_ROUTES, ...V1_ROUTES],
    request: async (route) => ({
      url: '/v1/orders',
      body: { wholesaler: route.wholesaler, items: [{ pzn: '4114918', quantity: 2 }] },
    }),
  },
  {
    name: 'POST /v1/orders?dry_run=true',
    operations: ['vertragsdatenAbfragen', 'verfuegbarkeitAnfragen'],
    absent: ['bestellen'],
    routes: [...V2_ROUTES, ...V1_ROUTES],
    request: async (route) => ({
      url: '/v1/orders',
      query: { dry_run: 'true' },
      body: { wholesaler: route.wholesaler, items: [{ pzn: '4114918', quantity: 2 }] },
    }),
  },
  {
    name: 'GET /v1/orders/{order_id}/status',
    operations: ['bestellstatusAbfragen'],
    routes: [...V2_ROUTES, ...V1_ROUTES],
    request: async (route, seed) => ({
      url: `/v1/orders/${(await seed()).orderId}/status`,
      query: { wholesaler: route.wholesaler },
    }),
  },
  {
    name: 'GET /v1/deliveries',
    operations: ['lieferavisAbfrageNeu'],
    routes: V2_ROUTES,
    request: async (route, seed) => {
      await seed();
      return { url: '/v1/deliveries', query: { wholesaler: route.wholesaler } };
    },
  },
  {
    name: 'POST /v1/deliveries/confirm',
    operations: ['lieferavisBestaetigen'],
    routes: V2_ROUTES,
    request: async (route, seed) => ({
      url: '/v1/deliveries/confirm',
      body: { wholesaler: route.wholesaler, tracking_numbers: [(await noticeOf(seed)).tracking_number] },
    }),
  },
  {
    name: 'GET /v1/deliveries/history?tracking_number=…',
    operations: ['lieferavisAbfrageHist'],
    routes: V2_ROUTES,
    request: async (route, seed) => ({
      url: '/v1/deliveries/history',
      query: { wholesaler: route.wholesaler, tracking_number: (await noticeOf(seed)).tracking_number },
    }),
  },
  {
    name: 'GET /v1/deliveries/history?barcode=…',
    operations: ['lieferavisAbfrageHist'],
    routes: V2_ROUTES,
    request: async (route, seed) => ({
      url: '/v1/deliveries/history',
      query: { wholesaler: route.wholesaler, barcode: (await noticeOf(seed)).barcode },
    }),
  },
  {
    name: 'GET /v1/deliveries/history (the stored list, after a credential check)',
    operations: ['verbindungTesten'],
    routes: V2_ROUTES,
    request: async (route, seed) => {
      await seed();
      return { url: '/v1/deliveries/history', query: { wholesaler: route.wholesaler } };
    },
  },
  {
    name: 'POST /v1/returns',
    operations: ['retourenavisAnfragen'],
    routes: V2_ROUTES,
    request: async (route, seed) => ({
      url: '/v1/returns',
      body: { wholesaler: route.wholesaler, items: await returnItems(seed) },
    }),
  },
  {
    name: 'POST /v1/returns/announce',
    operations: ['retourenavisAnkuendigen'],
    routes: V2_ROUTES,
    request: async (route, seed) => ({
      url: '/v1/returns/announce',
      body: {
        wholesaler: route.wholesaler,
        items: await returnItems(seed),
        company: { iban: 'DE02120300000000202051' },
      },
    }),
  },
  {
    name: 'POST /v1/returns/offers',
    operations: ['ruecknahmeangebotAnfordern'],
    routes: [...V2_ROUTES, ...V1_ROUTES],
    request: async (route) => ({
      url: '/v1/returns/offers',
      body: { wholesaler: route.wholesaler, items: [{ pzn: '4114918', quantity: 2 }] },
    }),
  },
  {
    name: 'GET /v1/documents/{id}',
    operations: ['dokumentAbfragen'],
    routes: V2_ROUTES,
    request: async (route, seed) => ({
      url: `/v1/documents/${(await noticeOf(seed)).document_id}`,
      query: { wholesaler: route.wholesaler },
    }),
  },
];

async function returnItems(seed: () => Promise<Seed>) {
  const notice = await noticeOf(seed);
  return [{ tracking_number: notice.tracking_number, pzn: '4114918', quantity: 1, reason: 'damaged' }];
}

/**
 * The rest of the wholesaler endpoints, route by route: each request must land, with every MSV3 operation
 * it needs, on the route's mock and no other (no other mock sees any SOAP call). What an endpoint needs
 * (an order, its delivery notice and delivery-note document) is placed through the API on that same route.
 */
describeEachDialect(
  'sandbox routing (docs/wholesalers.md "Routing") for orders, deliveries, returns and documents',
  (getDatabase) => {
    let gw: Gateway;
    beforeAll(async () => {
      gw = await startGateway({ database: getDatabase() });
    });
    afterAll(() => gw.close());

    /**
     * Places an order through the gateway on the route (once per route) and reads its delivery notice: the
     * state that status, deliveries, returns and documents need, on the mock that the route reaches.
     */
    const seeds = new Map<string, Promise<Seed>>();
    const seedFor = (route: Route) => () => {
      const id = `${route.key}/${route.wholesaler}`;
      let seed = seeds.get(id);
      if (seed === undefined) {
        seed = placeAndList(route);
        seeds.set(id, seed);
      }
      return seed;
    };
    /** The route's mock tenant; the sandbox keeps one per account (here the test key's). */
    const tenantOf = (route: Route) =>
      route.mock === 'sandbox' ? gw.sandboxTenant(route.wholesaler) : route.tenant;
    async function placeAndList(route: Route): Promise<Seed> {
      const placed = await gw.inject({
        key: route.key,
        url: '/v1/orders',
        body: { wholesaler: route.wholesaler, items: [{ pzn: '4114918', quantity: 3 }] },
      });
      expect(placed.statusCode, placed.body).toBe(200);
      const { order_id: orderId, request_id: requestId } = placed.json();
      // The order is held by the route's mock, in the route's tenant.
      expect(
        gw.mocks[route.mock].orders(tenantOf(route), TEST_CREDENTIALS.username).map((o) => o.id),
      ).toContain(requestId);
      if (route.msv3 === 1) return { orderId };
      const listed = await gw.inject({
        key: route.key,
        url: '/v1/deliveries',
        query: { wholesaler: route.wholesaler },
      });
      expect(listed.statusCode, listed.body).toBe(200);
      const notice = listed
        .json()
        .deliveries.find((d: { tracking_number: string }) =>
          gw.mocks[route.mock]
            .deliveryNotices(tenantOf(route), TEST_CREDENTIALS.username)
            .some((n) => n.notice.deliveryNoteNumber === d.tracking_number),
        );
      expect(notice, listed.body).toBeDefined();
      return { orderId, notice };
    }

    for (const endpoint of STATEFUL_ENDPOINTS) {
      describe(endpoint.name, () => {
        for (const route of endpoint.routes) {
          it(`sends ${route.name} (${route.key} key, ${route.wholesaler})`, async () => {
            const request = { ...(await endpoint.request(route, seedFor(route))), key: route.key };
            const names = Object.keys(gw.mocks) as (keyof Mocks)[];
            const operations = [...endpoint.operations, ...(endpoint.absent ?? [])];
            const count = () => ({
              total: names.map((n) => gw.mocks[n].requestCount()),
              byOperation: operations.map((op) => names.map((n) => gw.mocks[n].requestCount(op))),
            });
            const before = count();
            const response = await gw.inject(request);
            expect(response.statusCode, response.body).toBe(200);
            const after = count();
            const reached = Object.fromEntries(
              operations.map((op, i) => [
                op,
                names.filter((_, j) => after.byOperation[i]![j]! > before.byOperation[i]![j]!),
              ]),
            );
            expect(reached).toEqual({
              ...Object.fromEntries(endpoint.operations.map((op) => [op, [route.mock]])),
              ...Object.fromEntries((endpoint.absent ?? []).map((op) => [op, []])),
            });
            // No other mock received any SOAP call at all.
            const others = names.filter((n) => n !== route.mock);
            expect(others.map((n) => after.total[names.indexOf(n)])).toEqual(
              others.map((n) => before.total[names.indexOf(n)]),
            );
          });
        }
      });
    }
  },
);

describe('the wholesaler endpoints over a real socket', () => {
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    gw = await startGateway({ database });
  });
  afterAll(async () => {
    await gw.close();
    await database.dispose();
  });

  it('serves availability, bulk, contracts, connection test and the wholesaler list', async () => {
    const cases: [GatewayRequest, (body: Record<string, unknown>) => void][] = [
      [{ url: '/v1/wholesalers', credentials: null }, (b) => expect(b.wholesalers).toHaveLength(6)],
      [
        { url: '/v1/connection/test', body: { wholesaler: 'phoenix' } },
        (b) => expect(b.connected).toBe(true),
      ],
      [
        {
          url: '/v1/availability',
          body: { wholesaler: 'phoenix', items: [{ pzn: '4114918', quantity: 2 }] },
        },
        (b) =>
          expect(b).toMatchObject({
            response_type: 'standard',
            items: [{ pzn: '04114918', available: true }],
          }),
      ],
      [
        { url: '/v1/availability/bulk', body: { wholesaler: 'gehe', pzns: ['4114918'] } },
        (b) => expect(b.available_pzns).toEqual(['04114918']),
      ],
      [
        { url: '/v1/contracts', query: { wholesaler: 'phoenix' } },
        (b) => expect(b.customer_id).toBe('apotheke1'),
      ],
    ];
    for (const [request, check] of cases) {
      const response = await gw.fetch(request);
      expect(response.status, request.url).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      check((await response.json()) as Record<string, unknown>);
    }
  });

  it('sends errors in the uniform shape with the request id', async () => {
    const response = await gw.fetch({
      url: '/v1/availability',
      body: { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.SERVER_FAULT.pzn, quantity: 1 }] },
    });
    expect(response.status).toBe(502);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'wholesaler_fault', error_code: '1501', wholesaler: 'phoenix' });
    expect(body.request_id).toBe(response.headers.get('x-request-id'));
  });
});

describeEachDialect('custom endpoints and the address policy', (getDatabase) => {
  let open: Gateway;
  let strict: Gateway;
  beforeAll(async () => {
    open = await startGateway({
      database: getDatabase(),
      env: { ALLOW_PRIVATE_ENDPOINTS: 'true', BREAKER_FAILURE_THRESHOLD: '2' },
    });
    strict = await startGateway({ database: getDatabase() });
  });
  afterAll(async () => {
    await open.close();
    await strict.close();
  });

  it('refuses at connect time an endpoint that became private (the operator setting changed, or DNS did)', async () => {
    const endpoint = open.mocks.live.baseUrl({ tenant: 'custom/nah', version: 2 });
    const { wholesaler } = (
      await open.inject({ url: '/v1/wholesalers/custom', body: { name: 'Nah', endpoint }, key: 'live' })
    ).json();
    const allowed = await open.inject({
      url: '/v1/connection/test',
      body: { wholesaler: wholesaler.id },
      key: 'live',
    });
    expect(allowed.statusCode).toBe(200);

    const before = open.mocks.live.requestCount();
    const refused = await strict.inject({
      url: '/v1/connection/test',
      body: { wholesaler: wholesaler.id },
      key: open.keys.live.secret,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'endpoint_not_allowed', wholesaler: wholesaler.id });
    expect(open.mocks.live.requestCount()).toBe(before);
  });

  it('answers 502 wholesaler_http_error when the endpoint is no MSV3 server', async () => {
    const notMsv3 = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end('<h1>Not Found</h1>');
    });
    await new Promise<void>((resolve) => notMsv3.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = notMsv3.address() as AddressInfo;
      const endpoint = `http://127.0.0.1:${port}/msv3/v2.0`;
      const { wholesaler } = (
        await open.inject({
          url: '/v1/wholesalers/custom',
          body: { name: 'Webseite', endpoint },
          key: 'live',
        })
      ).json();
      const response = await open.inject({
        url: '/v1/connection/test',
        body: { wholesaler: wholesaler.id },
        key: 'live',
      });
      expect(response.statusCode).toBe(502);
      expect(response.json()).toMatchObject({
        error: 'wholesaler_http_error',
        error_code: '1502',
        upstream: { http_status: 404, technical_text: expect.stringContaining('Not Found') },
      });
    } finally {
      await new Promise((resolve) => notMsv3.close(resolve));
    }
  });

  it('reports a wholesaler going down to the status feed, with its id and owner', async () => {
    const key = await open.createKey('live');
    const endpoint = `${open.closedPortUrl}/msv3/v2.0`;
    const { wholesaler } = (
      await open.inject({ url: '/v1/wholesalers/custom', body: { name: 'Weg', endpoint }, key: key.secret })
    ).json();
    for (let i = 0; i < 2; i++) {
      const response = await open.inject({
        url: '/v1/connection/test',
        body: { wholesaler: wholesaler.id },
        key: key.secret,
      });
      expect(response.statusCode).toBe(502);
    }
    expect(open.statusChanges).toContainEqual(
      expect.objectContaining({
        wholesaler: wholesaler.id,
        route: 'live',
        mode: 'live',
        accountId: key.accountId,
        status: 'down',
        previousStatus: 'up',
        cause: { reason: 'unreachable', detail: 'ECONNREFUSED' },
      }),
    );
    const paused = await open.inject({
      url: '/v1/connection/test',
      body: { wholesaler: wholesaler.id },
      key: key.secret,
    });
    expect(paused.statusCode).toBe(503);
    expect(paused.json().error).toBe('wholesaler_circuit_open');
    expect(paused.headers['retry-after']).toBeDefined();
  });
});
