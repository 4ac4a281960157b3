import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteRegistration } from '../src/app.js';
import { msv3Credentials } from '../src/http/msv3-credentials.js';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { lieferavisAbfrageNeu } from '../src/msv3/operations/lieferavis-abfrage-neu.js';
import { callWholesaler } from '../src/services/wholesaler-call.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './db.js';
import { type Gateway, type GatewayRequest, type Mocks, startGateway } from './gateway.js';

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

describeEachDialect('sandbox routing (SPEC §5 rule 6) for every wholesaler endpoint', (getDatabase) => {
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
