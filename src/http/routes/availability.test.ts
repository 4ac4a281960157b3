import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, describeEachDialect, type TestDatabase } from '../../../test/db.js';
import { type Gateway, startGateway, TEST_CREDENTIALS } from '../../../test/gateway.js';
import { validPzns } from '../../../test/pzns.js';
import { until } from '../../../test/until.js';
import { SCENARIO_PZNS, SUBSTITUTE_PZN } from '../../mock/index.js';
import { parseCatalogue } from '../../wholesalers/catalogue.js';

const availability = (wholesaler: string, items: unknown[]) => ({
  url: '/v1/availability',
  body: { wholesaler, items },
});

describeEachDialect('POST /v1/availability', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  it('answers each item with deliveries, padded PZNs and response_type standard', async () => {
    const response = await gw.inject(
      availability('phoenix', [
        { pzn: '4114918', quantity: 3 },
        { pzn: SCENARIO_PZNS.PARTIAL.pzn, quantity: 5, demand_type: 'one_of_many' },
      ]),
    );
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ wholesaler: 'phoenix', response_type: 'standard' });
    expect(body.items).toHaveLength(2);
    expect(body.items[0]).toEqual({
      pzn: '04114918',
      quantity_requested: 3,
      available: true,
      deliveries: [
        {
          type: 'normal',
          quantity: 3,
          tour: expect.any(String),
          estimated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
          estimated_at_offset: expect.stringMatching(/^(Z|[+-]\d{2}:\d{2})$/),
          reason: null,
          tour_deviation: false,
        },
      ],
      substitution: null,
      invalid_pzn: null,
    });
    expect(body.items[1]).toMatchObject({
      pzn: SCENARIO_PZNS.PARTIAL.pzn,
      quantity_requested: 5,
      available: false,
      deliveries: [
        { type: 'normal', quantity: 2, reason: null },
        { type: 'not_deliverable', quantity: 3, reason: 'partial_shortage', estimated_at: null },
      ],
    });
  });

  it('maps every MSV3 part type, defect reason, tour deviation and substitution', async () => {
    const pzns = SCENARIO_PZNS;
    const response = await gw.inject(
      availability('phoenix', [
        { pzn: pzns.BACK_ORDER.pzn, quantity: 1 },
        { pzn: pzns.NETWORK.pzn, quantity: 1 },
        { pzn: pzns.DISPO.pzn, quantity: 1 },
        { pzn: pzns.NOT_DELIVERABLE.pzn, quantity: 1 },
        { pzn: pzns.TOUR_DEVIATION.pzn, quantity: 1 },
        { pzn: pzns.SUBSTITUTION.pzn, quantity: 1 },
      ]),
    );
    expect(response.statusCode).toBe(200);
    const items = response.json().items;
    const summary = items.map((i: { available: boolean; deliveries: { type: string; reason: string }[] }) => [
      i.available,
      i.deliveries.map((d) => `${d.type}/${d.reason}`).join(','),
    ]);
    expect(summary).toEqual([
      [false, 'backorder/out_of_stock'],
      [true, 'network/null'],
      [false, 'special_procurement/not_carried'],
      [false, 'not_deliverable/manufacturer_cannot_deliver'],
      [true, 'normal/null'],
      [false, 'normal/null'],
    ]);
    expect(items[4].deliveries[0].tour_deviation).toBe(true);
    expect(items[5].substitution).toEqual({
      reason: 'successor_product',
      defect_reason: 'withdrawn_from_market',
      pzn: SUBSTITUTE_PZN,
    });
  });

  it('treats a substitution that is only a proposal as not replacing the article', async () => {
    const response = await gw.inject({
      ...availability('phoenix', [{ pzn: SCENARIO_PZNS.SUBSTITUTION.pzn, quantity: 1 }]),
      credentials: { username: 'apo1nosubst', password: 'x' },
    });
    expect(response.statusCode).toBe(200);
    const [item] = response.json().items;
    expect(item.substitution).toMatchObject({ reason: 'proposal', pzn: SUBSTITUTE_PZN });
    expect(item.deliveries.map((d: { type: string }) => d.type)).toEqual(['not_deliverable']);
    expect(item.available).toBe(false);
  });

  it('reports an unspecific answer as response_type unspecific', async () => {
    const response = await gw.inject({
      ...availability('phoenix', [{ pzn: '4114918', quantity: 1 }]),
      credentials: { username: 'apo1unspecific', password: 'x' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      response_type: 'unspecific',
      items: [{ available: true, deliveries: [{ type: 'normal', tour: null, estimated_at: null }] }],
    });
  });

  it('speaks MSV3 v1 to a v1 wholesaler: no tour deviation, quantities up to 9,999', async () => {
    const ok = await gw.inject(availability('gehe', [{ pzn: '4114918', quantity: 9_999 }]));
    expect(ok.statusCode).toBe(200);
    expect(ok.json().items[0].deliveries[0].tour_deviation).toBeNull();

    const tooMany = await gw.inject(
      availability('gehe', [
        { pzn: '4114918', quantity: 1 },
        { pzn: '1234562', quantity: 10_000 },
      ]),
    );
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toMatchObject({
      error: 'invalid_request',
      param: 'items[1].quantity',
      wholesaler: 'gehe',
      message: expect.stringMatching(
        /^items\[1\]\.quantity must be at most 9999: gehe speaks MSV3 version 1/,
      ),
    });
    const v2 = await gw.inject(availability('phoenix', [{ pzn: '4114918', quantity: 99_999 }]));
    expect(v2.statusCode).toBe(200);
  });

  it('refuses a PZN that occurs twice, naming both items (after padding), before calling the wholesaler', async () => {
    const callsBefore = gw.mocks.sandbox.requestCount();
    const response = await gw.inject(
      availability('phoenix', [
        { pzn: '04114918', quantity: 1 },
        { pzn: '1234562', quantity: 1 },
        { pzn: '4114918', quantity: 2 },
      ]),
    );
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: 'invalid_request',
      param: 'items[2].pzn',
      message: expect.stringContaining('items[2].pzn repeats items[0].pzn (04114918)'),
    });
    expect(gw.mocks.sandbox.requestCount()).toBe(callsBefore);
  });

  it('names the item index and field of every schema violation', async () => {
    const item = { pzn: '4114918', quantity: 1 };
    const cases: [unknown[], string, RegExp][] = [
      [[item, item, item, { pzn: '12345678901', quantity: 1 }], 'items[3].pzn', /must be 1 to 8 digits/],
      [[item, { pzn: 'abc', quantity: 1 }], 'items[1].pzn', /must be 1 to 8 digits/],
      [[{ pzn: '1', quantity: 0 }], 'items[0].quantity', /must be at least 1\./],
      [[{ pzn: '1', quantity: 100_000 }], 'items[0].quantity', /must be at most 99999\./],
      [[{ pzn: '1', quantity: 1.5 }], 'items[0].quantity', /must be a whole number/],
      [[{ pzn: '1' }], 'items[0].quantity', /is required/],
      [[{ pzn: '1', quantity: 1, demand_type: 'some' }], 'items[0].demand_type', /must be one of/],
      [[], 'items', /needs at least 1 entry\./],
      [
        Array.from({ length: 51 }, (_, i) => ({ pzn: String(i + 1), quantity: 1 })),
        'items',
        /can have at most 50 entries\./,
      ],
    ];
    for (const [items, param, message] of cases) {
      const response = await gw.inject(availability('phoenix', items));
      expect({ param, status: response.statusCode }).toEqual({ param, status: 400 });
      expect(response.json()).toMatchObject({
        error: 'invalid_request',
        param,
        message: expect.stringMatching(message),
      });
      expect(response.json().message.startsWith(`\`${param}\``)).toBe(true);
    }
  });

  it('does not ask for a PZN with a wrong check digit: its item says which digit it needs', async () => {
    const asked = () => gw.mocks.sandbox.requestCount('verfuegbarkeitAnfragen');
    const before = asked();
    const response = await gw.inject(
      availability('phoenix', [
        { pzn: '4114917', quantity: 3 },
        { pzn: '04114918', quantity: 2 },
        { pzn: '04114960', quantity: 1 },
      ]),
    );
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.response_type).toBe('standard');
    expect(body.items[0]).toEqual({
      pzn: '04114917',
      quantity_requested: 3,
      available: false,
      deliveries: [],
      substitution: null,
      invalid_pzn: {
        reason: 'wrong_check_digit',
        expected_check_digit: '8',
        message: '04114917 has a wrong check digit: a PZN starting with 0411491 ends in 8 (04114918).',
      },
    });
    expect(body.items[1]).toMatchObject({ pzn: '04114918', available: true, invalid_pzn: null });
    expect(body.items[2]).toMatchObject({
      pzn: '04114960',
      available: false,
      invalid_pzn: { reason: 'not_issuable', expected_check_digit: null },
    });
    expect(asked()).toBe(before + 1);
    // With no valid PZN left, the wholesaler is not asked at all.
    const none = await gw.inject(availability('phoenix', [{ pzn: '4114917', quantity: 1 }]));
    expect(none.statusCode).toBe(200);
    expect(none.json()).toMatchObject({
      response_type: null,
      items: [{ available: false, invalid_pzn: { expected_check_digit: '8' } }],
    });
    expect(asked()).toBe(before + 1);
  });

  it('needs both MSV3 headers (400) and reports a rejection by the wholesaler as 401', async () => {
    const body = availability('phoenix', [{ pzn: '17', quantity: 1 }]);
    const none = await gw.inject({ ...body, credentials: null });
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ error: 'wholesaler_credentials_missing', param: 'X-MSV3-Username' });
    const noPassword = await gw.inject({
      ...body,
      credentials: null,
      headers: { 'x-msv3-username': TEST_CREDENTIALS.username },
    });
    expect(noPassword.json()).toMatchObject({
      error: 'wholesaler_credentials_missing',
      param: 'X-MSV3-Password',
    });
    const rejected = await gw.inject({
      ...body,
      credentials: { username: 'apotheke1', password: 'wrong-password' },
    });
    expect(rejected.statusCode).toBe(401);
    expect(rejected.json()).toMatchObject({
      error: 'wholesaler_credentials_rejected',
      wholesaler: 'phoenix',
    });
  });

  it('answers 404 for an unknown wholesaler', async () => {
    const response = await gw.inject(availability('nobody', [{ pzn: '17', quantity: 1 }]));
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: 'wholesaler_not_found', wholesaler: 'nobody' });
  });

  it('passes a wholesaler fault on as 502 with its texts, and its throttling as 503', async () => {
    const fault = await gw.inject(
      availability('phoenix', [{ pzn: SCENARIO_PZNS.SERVER_FAULT.pzn, quantity: 1 }]),
    );
    expect(fault.statusCode).toBe(502);
    expect(fault.json()).toMatchObject({
      error: 'wholesaler_fault',
      wholesaler: 'phoenix',
      upstream: { kind: 'ServerFault', user_text: expect.any(String), technical_text: expect.any(String) },
    });
    expect(fault.json().message).toContain(fault.json().upstream.user_text);
    const busy = await gw.inject(
      availability('phoenix', [{ pzn: SCENARIO_PZNS.DENIAL_OF_SERVICE.pzn, quantity: 1 }]),
    );
    expect(busy.statusCode).toBe(503);
    expect(busy.headers['retry-after']).toBeDefined();
    expect(busy.json()).toMatchObject({ error: 'wholesaler_throttled' });
  });

  it('answers 502 for a malformed answer and for an unreachable wholesaler', async () => {
    const malformed = await gw.inject(
      availability('phoenix', [{ pzn: SCENARIO_PZNS.MALFORMED_ANSWER.pzn, quantity: 1 }]),
    );
    expect(malformed.statusCode).toBe(502);
    expect(malformed.json().error).toBe('wholesaler_bad_response');
    const offline = await gw.inject({
      ...availability('offline', [{ pzn: '17', quantity: 1 }]),
      key: 'live',
    });
    expect(offline.statusCode).toBe(502);
    expect(offline.json()).toMatchObject({ error: 'wholesaler_unreachable', wholesaler: 'offline' });
  });
});

describe('POST /v1/availability with a slow wholesaler', () => {
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    gw = await startGateway({
      database,
      env: { UPSTREAM_HEADERS_TIMEOUT_MS: '300' },
      mockOptions: { sandbox: { slowAnswerMs: 2_000 } },
    });
  });
  afterAll(async () => {
    await gw.close();
    await database.dispose();
  });

  it('answers 504 when the wholesaler does not answer within the configured timeout', async () => {
    const started = performance.now();
    const response = await gw.inject(
      availability('phoenix', [{ pzn: SCENARIO_PZNS.SLOW_ANSWER.pzn, quantity: 1 }]),
    );
    expect(response.statusCode).toBe(504);
    expect(response.json()).toMatchObject({ error: 'wholesaler_timeout', wholesaler: 'phoenix' });
    expect(performance.now() - started).toBeLessThan(1_900);
  });
});

describe("POST /v1/availability beyond the gateway's own limit of calls to a wholesaler", () => {
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    gw = await startGateway({
      database,
      env: { UPSTREAM_MAX_CONCURRENCY: '1', UPSTREAM_MAX_QUEUE: '0' },
      mockOptions: { sandbox: { slowAnswerMs: 400 } },
    });
  });
  afterAll(async () => {
    await gw.close();
    await database.dispose();
  });

  it('answers 503 gateway_busy with Retry-After at once, while the slot is taken', async () => {
    const slow = gw.inject(availability('phoenix', [{ pzn: SCENARIO_PZNS.SLOW_ANSWER.pzn, quantity: 1 }]));
    await until(
      'the slow call holding the slot',
      async () =>
        /^msv3_gateway_wholesaler_calls_in_flight\{wholesaler="phoenix"[^}]*\} 1$/m.test(
          (await gw.inject({ url: '/metrics' })).body,
        ),
      300,
      5,
    );
    const started = performance.now();
    const refused = await gw.inject(availability('phoenix', [{ pzn: '4114918', quantity: 1 }]));
    expect(performance.now() - started).toBeLessThan(300);
    expect(refused.statusCode).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json()).toMatchObject({
      error: 'gateway_busy',
      error_code: '1403',
      wholesaler: 'phoenix',
    });
    expect(refused.json().message).toContain('own limit');
    expect((await slow).statusCode).toBe(200);
  });

  it("still answers the wholesaler's own DenialOfServiceFault with 503 wholesaler_throttled", async () => {
    const throttled = await gw.inject(
      availability('phoenix', [{ pzn: SCENARIO_PZNS.DENIAL_OF_SERVICE.pzn, quantity: 1 }]),
    );
    expect(throttled.statusCode).toBe(503);
    expect(throttled.headers['retry-after']).toBeDefined();
    expect(throttled.json()).toMatchObject({
      error: 'wholesaler_throttled',
      upstream: { kind: 'DenialOfServiceFault' },
    });
  });
});

describe('POST /v1/availability with a wholesaler whose answer trickles in', () => {
  let database: TestDatabase;
  let gw: Gateway;
  let trickler: Server;
  beforeAll(async () => {
    // Headers at once, then one byte every 100 ms for at most 10 s: never a pause long enough for
    // UPSTREAM_BODY_TIMEOUT_MS, so only the deadline of the whole call can stop it.
    trickler = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/soap+xml; charset=utf-8' });
      let sent = 0;
      const timer = setInterval(() => {
        if (++sent > 100 || res.destroyed) {
          clearInterval(timer);
          res.end();
        } else res.write(' ');
      }, 100);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => trickler.listen(0, '127.0.0.1', resolve));
    const { port } = trickler.address() as AddressInfo;
    database = await createTestDatabase('sqlite');
    gw = await startGateway({
      database,
      env: {
        UPSTREAM_CONNECT_TIMEOUT_MS: '200',
        UPSTREAM_HEADERS_TIMEOUT_MS: '800',
        UPSTREAM_TOTAL_TIMEOUT_MS: '1000',
      },
      catalogue: () =>
        parseCatalogue({
          wholesalers: [
            {
              id: 'trickle',
              name: 'Trickle',
              version: 2,
              live: { baseUrl: `http://127.0.0.1:${port}/msv3/v2.0` },
            },
          ],
        }),
    });
  });
  afterAll(async () => {
    await gw?.close();
    await database?.dispose();
    trickler.closeAllConnections();
    await new Promise((resolve) => trickler.close(resolve));
  });

  it('answers 504 wholesaler_timeout once UPSTREAM_TOTAL_TIMEOUT_MS has passed', async () => {
    const started = performance.now();
    const response = await gw.inject({
      ...availability('trickle', [{ pzn: '4114918', quantity: 1 }]),
      key: 'live',
    });
    const elapsed = performance.now() - started;
    expect(response.statusCode).toBe(504);
    expect(response.json()).toMatchObject({
      error: 'wholesaler_timeout',
      wholesaler: 'trickle',
      message: expect.stringContaining('total timeout after 1000 ms, UPSTREAM_TOTAL_TIMEOUT_MS'),
    });
    // Generous margins: cut at the deadline, long before the 10 s the answer would take.
    expect(elapsed).toBeGreaterThan(900);
    expect(elapsed).toBeLessThan(5_000);
  });
});

describeEachDialect('POST /v1/availability/bulk', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  const bulk = (pzns: unknown[], wholesaler = 'phoenix') => ({
    url: '/v1/availability/bulk',
    body: { wholesaler, pzns },
  });

  it('returns the in-stock subset in request order, padded, repeats asked once', async () => {
    const response = await gw.inject(
      bulk(['4114918', SCENARIO_PZNS.NOT_DELIVERABLE.pzn, '1234562', '04114918']),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      wholesaler: 'phoenix',
      available_pzns: ['04114918', '01234562'],
      unavailable_pzns: [SCENARIO_PZNS.NOT_DELIVERABLE.pzn],
      invalid_pzns: [],
    });
  });

  it('asks only the PZNs with a right check digit and lists the others with the digit they need', async () => {
    const response = await gw.inject(bulk(['4114918', '4114917', '04114960', '4114917']));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      wholesaler: 'phoenix',
      available_pzns: ['04114918'],
      unavailable_pzns: [],
      invalid_pzns: [
        {
          pzn: '04114917',
          reason: 'wrong_check_digit',
          expected_check_digit: '8',
          message: '04114917 has a wrong check digit: a PZN starting with 0411491 ends in 8 (04114918).',
        },
        {
          pzn: '04114960',
          reason: 'not_issuable',
          expected_check_digit: null,
          message: expect.stringContaining('no check digit fits its first seven digits 0411496'),
        },
      ],
    });
    const allInvalid = await gw.inject(bulk(['4114917']));
    expect(allInvalid.json()).toMatchObject({ available_pzns: [], unavailable_pzns: [] });
  });

  it('accepts 10,000 PZNs and refuses 10,001', async () => {
    const pzns = validPzns(10_001);
    const ok = await gw.inject(bulk(pzns.slice(0, 10_000)));
    expect(ok.statusCode).toBe(200);
    const body = ok.json();
    expect(body.available_pzns.length + body.unavailable_pzns.length).toBe(10_000);
    const tooMany = await gw.inject(bulk(pzns));
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toMatchObject({
      param: 'pzns',
      message: expect.stringContaining('at most 10000'),
    });
  });

  it('names the offending PZN by index', async () => {
    const response = await gw.inject(bulk(['1', '2', '12a']));
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request', param: 'pzns[2]' });
  });

  it('answers 403 wholesaler_function_not_agreed when the contract lacks bulk availability', async () => {
    const response = await gw.inject({
      ...bulk(['17']),
      credentials: { username: 'apo1nobulk', password: 'x' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({
      error: 'wholesaler_function_not_agreed',
      wholesaler: 'phoenix',
      upstream: { kind: 'AuthorizationFault' },
    });
  });

  it('needs the MSV3 headers and a known wholesaler', async () => {
    const missing = await gw.inject({ ...bulk(['1']), credentials: null });
    expect(missing.json().error).toBe('wholesaler_credentials_missing');
    const unknown = await gw.inject(bulk(['1'], 'nobody'));
    expect(unknown.statusCode).toBe(404);
  });
});
