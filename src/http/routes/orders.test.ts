import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway, TEST_CREDENTIALS } from '../../../test/gateway.js';
import { validPzns } from '../../../test/pzns.js';
import { until } from '../../../test/until.js';
import { SCENARIO_PASSWORDS, SCENARIO_PZNS } from '../../mock/index.js';
import { gatewayOrderId } from '../../services/orders/ids.js';
import { insertOrderIfAbsent } from '../../store/orders.js';

const PLAIN = '04114918';
const OTHER_PHARMACY = { username: 'apotheke2', password: 'other-secret' };

interface PostOptions {
  key?: string;
  apiKey?: string;
  query?: Record<string, string>;
  credentials?: { username: string; password: string } | null;
}

describeEachDialect('POST /v1/orders and GET /v1/orders/{order_id}/status', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({
      database: getDatabase(),
      env: { UPSTREAM_HEADERS_TIMEOUT_MS: '400' },
      mockOptions: { sandbox: { nightOrderDelayMs: 1000, lateAnswerMs: 1500, slowAnswerMs: 1000 } },
    });
  });
  afterAll(() => gw.close());

  const placed = () => gw.mocks.sandbox.placedOrderCount({ tenant: gw.sandboxTenant('phoenix') });

  const calls = (operation?: string) => gw.mocks.sandbox.requestCount(operation);

  function post(body: unknown, options: PostOptions = {}) {
    return gw.inject({
      method: 'POST',
      url: '/v1/orders',
      body,
      ...(options.apiKey === undefined ? {} : { key: options.apiKey }),
      ...(options.query === undefined ? {} : { query: options.query }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      headers: options.key === undefined ? {} : { 'idempotency-key': options.key },
    });
  }

  function status(
    orderId: string,
    credentials?: { username: string; password: string },
    wholesaler = 'phoenix',
  ) {
    return gw.inject({
      url: `/v1/orders/${orderId}/status`,
      query: { wholesaler },
      ...(credentials === undefined ? {} : { credentials }),
    });
  }

  async function statusEvents(
    orderId: string,
  ): Promise<{ status: string; previous_status: string | null }[]> {
    const rows = await gw.database.db
      .selectFrom('webhook_events')
      .select(['payload', 'created_at'])
      .where('type', '=', 'order.status_changed')
      .orderBy('created_at')
      .execute();
    return rows
      .map((row) => JSON.parse(row.payload).data)
      .filter((data) => data.order_id === orderId)
      .map(({ status: s, previous_status }) => ({ status: s, previous_status }));
  }

  describe('placing', () => {
    it('places an order and answers with the delivery portions matched by PZN', async () => {
      const before = placed();
      const response = await post({
        wholesaler: 'phoenix',
        items: [
          { pzn: '4114918', quantity: 3 },
          { pzn: SCENARIO_PZNS.BACK_ORDER.pzn, quantity: 2, delivery_preference: 'backorder' },
        ],
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ status: 'confirmed', wholesaler: 'phoenix', dry_run: false });
      expect(body.order_id).toMatch(/^GW-[0-9A-Za-z]{22}$/);
      expect(body.order_id).toBe(gatewayOrderId(body.request_id));
      expect(body.items[0]).toMatchObject({
        pzn: PLAIN,
        quantity_ordered: 3,
        quantity_confirmed: 3,
        delivery_preference: 'normal',
        answered: true,
      });
      expect(body.items[0].deliveries[0]).toMatchObject({
        type: 'normal',
        quantity: 3,
        tour_id: expect.any(String),
      });
      expect(body.items[0].deliveries[0].estimated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      expect(body.items[1]).toMatchObject({ quantity_confirmed: 2, delivery_preference: 'backorder' });
      expect(body.items[1].deliveries.map((d: { type: string }) => d.type)).toEqual(['backorder']);
      expect(placed()).toBe(before + 1);
    });

    it('counts only delivering portions as confirmed and names substitutes and tour deviations', async () => {
      const response = await post({
        wholesaler: 'phoenix',
        items: [
          { pzn: SCENARIO_PZNS.PARTIAL.pzn, quantity: 5 },
          { pzn: SCENARIO_PZNS.SUBSTITUTION.pzn, quantity: 1 },
          { pzn: SCENARIO_PZNS.TOUR_DEVIATION.pzn, quantity: 1 },
        ],
      });
      expect(response.statusCode).toBe(200);
      const [partial, substituted, deviating] = response.json().items;
      expect(partial.quantity_confirmed).toBe(2);
      expect(partial.deliveries.find((d: { type: string }) => d.type !== 'normal')).toMatchObject({
        quantity: 3,
        reason: 'out_of_stock',
      });
      expect(substituted.substitution).toMatchObject({ reason: 'successor_product', pzn: '09990091' });
      expect(deviating.deliveries[0].tour_deviation).toBe(true);
    });

    it('refuses a PZN with a wrong check digit with 400 naming the item, and sends nothing', async () => {
      const before = { placed: placed(), calls: calls() };
      for (const query of [{}, { dry_run: 'true' }] as Record<string, string>[]) {
        const response = await post(
          {
            wholesaler: 'phoenix',
            items: [
              { pzn: PLAIN, quantity: 1 },
              { pzn: '4114917', quantity: 2 },
            ],
          },
          { query },
        );
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({
          error: 'invalid_request',
          param: 'items[1].pzn',
          wholesaler: 'phoenix',
          message:
            '`items[1].pzn` 04114917 has a wrong check digit: a PZN starting with 0411491 ends in 8 (04114918). Nothing was sent to the wholesaler.',
        });
      }
      const impossible = await post({ wholesaler: 'phoenix', items: [{ pzn: '04114960', quantity: 1 }] });
      expect(impossible.json()).toMatchObject({
        param: 'items[0].pzn',
        message: expect.stringContaining('is no PZN'),
      });
      expect({ placed: placed(), calls: calls() }).toEqual(before);
    });

    it('merges lines repeating a PZN with the same preference into one position', async () => {
      const response = await post({
        wholesaler: 'phoenix',
        items: [
          { pzn: '4114918', quantity: 2 },
          { pzn: '1234562', quantity: 1 },
          { pzn: PLAIN, quantity: 3 },
        ],
      });
      expect(response.statusCode).toBe(200);
      const items = response.json().items;
      expect(items).toHaveLength(2);
      expect(items[0]).toMatchObject({
        pzn: PLAIN,
        quantity_ordered: 5,
        quantity_confirmed: 5,
        merged_from: [0, 2],
      });
      expect(items[1].merged_from).toBeUndefined();
    });
  });

  describe('idempotency', () => {
    it('replays the stored result for the same key without calling the wholesaler', async () => {
      const key = randomUUID();
      const body = { wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 1 }] };
      const first = await post(body, { key });
      expect(first.statusCode).toBe(200);
      const soapCalls = calls();
      const orders = placed();

      const again = await post(body, { key });
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
      expect(calls()).toBe(soapCalls);
      expect(placed()).toBe(orders);
    });

    it('refuses the same key with another body, query or pharmacy (422) without calling the wholesaler', async () => {
      const key = randomUUID();
      const body = { wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 1 }] };
      expect((await post(body, { key })).statusCode).toBe(200);
      const soapCalls = calls();
      for (const response of [
        await post({ ...body, items: [{ pzn: PLAIN, quantity: 2 }] }, { key }),
        await post(body, { key, query: { dry_run: 'true' } }),
        await post(body, { key, credentials: OTHER_PHARMACY }),
      ]) {
        expect(response.statusCode).toBe(422);
        expect(response.json().error).toBe('idempotency_key_reused');
      }
      expect(calls()).toBe(soapCalls);
    });

    it('treats the same key as a new request under another API key', async () => {
      const key = randomUUID();
      const other = await gw.createKey('test');
      const body = { wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 1 }] };
      const mine = await post(body, { key });
      const theirs = await post(body, { key, apiKey: other.secret });
      expect(theirs.statusCode).toBe(200);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(theirs.json().order_id).not.toBe(mine.json().order_id);
    });

    it('answers a concurrent duplicate with 409 while the first is in flight, then replays', async () => {
      const key = randomUUID();
      const body = { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.SLOW_ANSWER.pzn, quantity: 1 }] };
      const before = calls('bestellen');
      const first = post(body, { key });
      // the first holds the key and waits for its answer
      await until('the first order sent', () => calls('bestellen') > before, 5_000);
      const duplicate = await post(body, { key });
      expect(duplicate.statusCode).toBe(409);
      expect(duplicate.json().error).toBe('idempotency_request_in_progress');
      expect(duplicate.headers['retry-after']).toBe('1');
      expect((await first).statusCode).toBe(200);
      expect((await post(body, { key })).headers['idempotent-replayed']).toBe('true');
      expect(calls('bestellen')).toBe(before + 1);
    });
  });

  describe('lost answers', () => {
    it('reconciles a dropped connection with bestellstatusAbfragen instead of ordering again', async () => {
      const before = {
        placed: placed(),
        bestellen: calls('bestellen'),
        status: calls('bestellstatusAbfragen'),
      };
      const response = await post(
        { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.CONNECTION_DROP.pzn, quantity: 2 }] },
        { key: randomUUID() },
      );
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        status: 'confirmed',
        items: [{ quantity_confirmed: 2, answered: true }],
      });
      expect(placed()).toBe(before.placed + 1);
      expect(calls('bestellen')).toBe(before.bestellen + 1);
      expect(calls('bestellstatusAbfragen')).toBe(before.status + 1);
    });

    it('reconciles an answer that arrives after the timeout', async () => {
      const before = { placed: placed(), bestellen: calls('bestellen') };
      const response = await post(
        { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.LATE_ANSWER.pzn, quantity: 1 }] },
        { key: randomUUID() },
      );
      expect(response.statusCode).toBe(200);
      expect(response.json().status).toBe('confirmed');
      expect(placed()).toBe(before.placed + 1);
      expect(calls('bestellen')).toBe(before.bestellen + 1);
    });

    it('reconciles an answer that cannot be decoded', async () => {
      const before = placed();
      const response = await post({
        wholesaler: 'phoenix',
        items: [{ pzn: SCENARIO_PZNS.MALFORMED_ANSWER.pzn, quantity: 1 }],
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().status).toBe('confirmed');
      expect(placed()).toBe(before + 1);
    });

    it('resends once with the same Id when the wholesaler does not know it, then reports its fault', async () => {
      const before = { placed: placed(), bestellen: calls('bestellen') };
      const key = randomUUID();
      const body = { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.SERVER_FAULT.pzn, quantity: 1 }] };
      const response = await post(body, { key });
      expect(response.statusCode).toBe(502);
      expect(response.json()).toMatchObject({ error: 'wholesaler_fault', upstream: { kind: 'ServerFault' } });
      expect(calls('bestellen')).toBe(before.bestellen + 2);
      expect(placed()).toBe(before.placed);
      // The key stays with the stored order: a retry resumes it (another attempt, not a replay).
      const retry = await post(body, { key });
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(calls('bestellen')).toBe(before.bestellen + 4);
    });
  });

  describe('night mode and rejection', () => {
    it('queues a night-mode order and reports it available once processed, with events', async () => {
      const response = await post({
        wholesaler: 'phoenix',
        items: [
          { pzn: SCENARIO_PZNS.NIGHT_MODE.pzn, quantity: 1 },
          { pzn: PLAIN, quantity: 4 },
        ],
      });
      expect(response.statusCode).toBe(200);
      const result = response.json();
      expect(result).toMatchObject({ status: 'queued_night_mode', order_label: null });
      expect(result.items[1]).toMatchObject({
        quantity_ordered: 4,
        quantity_confirmed: 0,
        deliveries: [],
        answered: false,
      });

      const early = await status(result.order_id);
      expect(early.statusCode).toBe(200);
      expect(early.json()).toMatchObject({ status: 'expired', placement_status: 'queued_night_mode' });
      expect(early.json().items[1]).toEqual({
        pzn: PLAIN,
        quantity_ordered: 4,
        delivery_preference: 'normal',
      });

      const later = await until(
        'the night order available',
        async () => {
          const answer = await status(result.order_id);
          return answer.json().status === 'available' && answer;
        },
        5_000,
      );
      expect(later.json()).toMatchObject({
        status: 'available',
        placement_status: 'confirmed',
        order_label: 'K1',
      });
      expect(later.json().items[1]).toMatchObject({
        quantity_confirmed: 4,
        deliveries: [{ type: 'normal' }],
      });
      expect(await statusEvents(result.order_id)).toEqual([
        { status: 'expired', previous_status: null },
        { status: 'available', previous_status: 'expired' },
      ]);
    });

    it('answers a rejected order with 422 and the wholesaler texts, also on replay', async () => {
      const key = randomUUID();
      const body = { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.ORDER_REJECTED.pzn, quantity: 1 }] };
      const response = await post(body, { key });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({
        error: 'order_rejected',
        wholesaler: 'phoenix',
        upstream: {
          kind: 'Auftragsfehler',
          error_code: 'A20',
          user_text: expect.stringContaining('Lieferstopp'),
        },
      });
      const soapCalls = calls();
      const replay = await post(body, { key });
      expect(replay.statusCode).toBe(422);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(calls()).toBe(soapCalls);
    });
  });

  describe('dry run', () => {
    it('checks contract and availability in chunks of 50 and places nothing', async () => {
      const before = {
        placed: placed(),
        bestellen: calls('bestellen'),
        availability: calls('verfuegbarkeitAnfragen'),
      };
      const items = validPzns(120).map((pzn) => ({ pzn, quantity: 1 }));
      items[7] = { pzn: SCENARIO_PZNS.NOT_DELIVERABLE.pzn, quantity: 2 };
      const response = await post({ wholesaler: 'phoenix', items }, { query: { dry_run: 'true' } });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({
        status: 'dry_run',
        dry_run: true,
        checks: { order_type: 'normal', order_type_agreed: true },
      });
      expect(body.order_id).toBeUndefined();
      expect(body.checks.next_cutoff.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00$/);
      expect(body.items).toHaveLength(120);
      expect(body.items[7]).toMatchObject({
        quantity_confirmed: 0,
        deliveries: [{ type: 'not_deliverable' }],
      });
      expect(body.checks.warnings).toContainEqual(
        expect.objectContaining({ code: 'not_fully_available', item: 7 }),
      );
      expect(calls('verfuegbarkeitAnfragen')).toBe(before.availability + 3);
      expect(calls('bestellen')).toBe(before.bestellen);
      expect(placed()).toBe(before.placed);
    });
  });

  describe('status', () => {
    it('maps a Bestellung Id the wholesaler does not know to unknown', async () => {
      const bestellungId = randomUUID();
      const id = gatewayOrderId(bestellungId);
      await insertOrderIfAbsent(
        gw.database.db,
        { now: () => Date.now() },
        {
          id,
          accountId: gw.keys.test.accountId,
          mode: 'test',
          wholesaler: 'phoenix',
          customerId: TEST_CREDENTIALS.username,
          bestellungId,
          request: {
            supportId: 1,
            subOrder: { id: randomUUID(), orderLabel: 'K1', supportId: 1 },
            lines: [],
          },
        },
      );
      const response = await status(id);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        order_id: id,
        status: 'unknown',
        placement_status: 'outcome_unknown',
      });
    });

    it('is 404 for an unknown order id and for another wholesaler', async () => {
      const unknown = await status('GW-doesnotexist');
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error).toBe('order_not_found');
      const placedOrder = (
        await post({ wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 1 }] })
      ).json();
      expect((await status(placedOrder.order_id, undefined, 'aep')).json().error).toBe('order_not_found');
    });

    it('shows an order only to the pharmacy that placed it, after the wholesaler accepted its credentials', async () => {
      const mine = (await post({ wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 1 }] })).json();
      const statusCalls = calls('bestellstatusAbfragen');

      const otherPharmacy = await status(mine.order_id, OTHER_PHARMACY);
      expect(otherPharmacy.statusCode).toBe(404);
      expect(otherPharmacy.body).not.toContain(PLAIN);

      const wrongPassword = await status(mine.order_id, {
        ...TEST_CREDENTIALS,
        password: SCENARIO_PASSWORDS.REJECTED,
      });
      expect(wrongPassword.statusCode).toBe(401);
      expect(wrongPassword.json().error).toBe('wholesaler_credentials_rejected');
      expect(wrongPassword.body).not.toContain(PLAIN);
      // Neither was answered by the wholesaler's status operation (the 401 comes from its login).
      expect(calls('bestellstatusAbfragen')).toBe(statusCalls);

      const own = await status(mine.order_id);
      expect(own.json()).toMatchObject({
        status: 'available',
        items: [{ pzn: PLAIN, quantity_confirmed: 1 }],
      });
    });
  });

  describe('validation', () => {
    const expectInvalid = async (
      response: Awaited<ReturnType<typeof post>>,
      param: string,
      message: RegExp,
    ) => {
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_request', param });
      expect(response.json().message).toMatch(message);
    };

    it('names the item and field of a bad line', async () => {
      await expectInvalid(
        await post({
          wholesaler: 'phoenix',
          items: [
            { pzn: PLAIN, quantity: 1 },
            { pzn: '12a', quantity: 1 },
          ],
        }),
        'items[1].pzn',
        /^`items\[1\]\.pzn` must be 1 to 8 digits/,
      );
      await expectInvalid(
        await post({ wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 0 }] }),
        'items[0].quantity',
        /^`items\[0\]\.quantity` must be at least 1/,
      );
    });

    it('takes 500 positions at most', async () => {
      const items = Array.from({ length: 501 }, (_, i) => ({ pzn: String(i + 1), quantity: 1 }));
      await expectInvalid(
        await post({ wholesaler: 'phoenix', items }),
        'items',
        /can have at most 500 entries\./,
      );
    });

    it('checks quantities against the wholesaler’s MSV3 version, merged lines included', async () => {
      await expectInvalid(
        await post({ wholesaler: 'gehe', items: [{ pzn: PLAIN, quantity: 10_000 }] }),
        'items[0].quantity',
        /at most 9999: gehe speaks MSV3 version 1/,
      );
      await expectInvalid(
        await post({
          wholesaler: 'phoenix',
          items: [
            { pzn: PLAIN, quantity: 60_000 },
            { pzn: PLAIN, quantity: 40_000 },
          ],
        }),
        'items[1].quantity',
        /merged with items\[0\]: 100000/,
      );
    });

    it('refuses a PZN repeated with another delivery preference', async () => {
      await expectInvalid(
        await post({
          wholesaler: 'phoenix',
          items: [
            { pzn: PLAIN, quantity: 1 },
            { pzn: '4114918', quantity: 1, delivery_preference: 'backorder' },
          ],
        }),
        'items[1].delivery_preference',
        /repeats PZN 04114918 of items\[0\]/,
      );
    });

    it('requires the MSV3 credentials and keeps the key free after a refusal', async () => {
      const key = randomUUID();
      const body = { wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 1 }] };
      const missing = await post(body, { key, credentials: null });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().error).toBe('wholesaler_credentials_missing');
      expect((await post(body, { key })).statusCode).toBe(200);
    });
  });
});
