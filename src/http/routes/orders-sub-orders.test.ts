import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import { SCENARIO_PZNS } from '../../mock/index.js';
import { subOrderIdFor } from '../../services/orders/ids.js';

/**
 * Orders with order types and several sub-orders, through the gateway and the sandbox wholesaler
 * (docs/orders.md): one `Bestellung` per order, answers matched by sub-order id, the contract checked
 * before anything is sent, refused sub-orders beside taken ones, night mode waiting, and the order
 * record with what arrived.
 */

const PLAIN = '04114918';
const OTHER = '01234562';

describeEachDialect('orders with sub-orders', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({
      database: getDatabase(),
      mockOptions: { sandbox: { nightOrderDelayMs: 60_000 } },
    });
  });
  afterAll(() => gw.close());

  const login = (marker = '') => ({
    username: `apo${randomUUID().slice(0, 8)}${marker}`,
    password: 'sandbox-pw',
  });
  const calls = (operation: string) => gw.mocks.sandbox.requestCount(operation);
  const order = (body: unknown, credentials = login(), headers: Record<string, string> = {}) =>
    gw.inject({
      method: 'POST',
      url: '/v1/orders',
      body: { wholesaler: 'phoenix', ...(body as object) },
      credentials,
      headers,
    });

  const THREE = [
    { order_type: 'normal', order_label: 'K1', items: [{ pzn: PLAIN, quantity: 2 }] },
    {
      order_type: 'batch',
      order_label: 'LAGER',
      items: [
        { pzn: PLAIN, quantity: 5 },
        { pzn: OTHER, quantity: 1 },
      ],
    },
    { order_type: 'special', items: [{ pzn: SCENARIO_PZNS.SPLIT_DELIVERY.pzn, quantity: 4 }] },
  ];

  it('sends three sub-orders of three types as one Bestellung and answers each, matched by id', async () => {
    const before = calls('bestellen');
    const response = await order({ sub_orders: THREE });
    expect(response.statusCode, response.body).toBe(200);
    expect(calls('bestellen')).toBe(before + 1);
    const result = response.json();
    expect(result).toMatchObject({ status: 'confirmed', placement_status: 'confirmed', order_label: 'K1' });
    expect(
      result.sub_orders.map((s: Record<string, unknown>) => [
        s.sub_order_id,
        s.order_type,
        s.requested_label,
        s.status,
      ]),
    ).toEqual([
      [subOrderIdFor(result.request_id, 0), 'normal', 'K1', 'confirmed'],
      [subOrderIdFor(result.request_id, 1), 'batch', 'LAGER', 'confirmed'],
      [subOrderIdFor(result.request_id, 2), 'special', 'SONDER', 'confirmed'],
    ]);
    expect(
      result.sub_orders[1].items.map((i: { pzn: string; quantity_confirmed: number }) => [
        i.pzn,
        i.quantity_confirmed,
      ]),
    ).toEqual([
      [PLAIN, 5],
      [OTHER, 1],
    ]);
    // The same PZN in two sub-orders is two positions, each answered in its own sub-order.
    expect(result.items.map((i: { pzn: string }) => i.pzn)).toEqual([
      PLAIN,
      PLAIN,
      OTHER,
      SCENARIO_PZNS.SPLIT_DELIVERY.pzn,
    ]);
  });

  it('refuses a fourth sub-order of a type the contract does not agree, before anything is sent', async () => {
    const before = { bestellen: calls('bestellen') };
    const response = await order({
      sub_orders: [
        ...THREE,
        { order_type: 'shipping', container_id: 'KISTE7', items: [{ pzn: PLAIN, quantity: 1 }] },
      ],
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({
      error: 'order_type_not_agreed',
      param: 'sub_orders[3].order_type',
    });
    expect(calls('bestellen')).toBe(before.bestellen);
    const shipping = await order(
      { order_type: 'shipping', container_id: 'KISTE7', items: [{ pzn: PLAIN, quantity: 1 }] },
      login('versand'),
    );
    expect(shipping.statusCode, shipping.body).toBe(200);
    expect(shipping.json().sub_orders[0]).toMatchObject({ order_type: 'shipping', container_id: 'KISTE7' });
  });

  it('refuses more free labels than the contract allows, and broken complete containers, in dry runs too', async () => {
    const twoLabels = {
      sub_orders: [
        { order_type: 'batch', order_label: 'A', items: [{ pzn: PLAIN, quantity: 1 }] },
        { order_type: 'batch', order_label: 'B', items: [{ pzn: OTHER, quantity: 1 }] },
      ],
    };
    const before = calls('bestellen');
    for (const query of [{}, { dry_run: 'true' }] as Record<string, string>[]) {
      const refused = await gw.inject({
        method: 'POST',
        url: '/v1/orders',
        query,
        body: { wholesaler: 'phoenix', ...twoLabels },
        credentials: login(),
      });
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({
        error: 'order_labels_exceeded',
        param: 'sub_orders[1].order_label',
      });
    }
    const later = await order(
      {
        order_type: 'shipping',
        container_id: 'KISTE7',
        items: [{ pzn: PLAIN, quantity: 1, delivery_preference: 'backorder' }],
      },
      login('versandkomplett'),
    );
    expect(later.json()).toMatchObject({
      error: 'complete_containers_only',
      param: 'items[0].delivery_preference',
    });
    expect(calls('bestellen')).toBe(before);
  });

  it('reads the contract once for a login within ORDER_CONTRACT_CACHE_TTL_MS', async () => {
    const credentials = login();
    const before = calls('vertragsdatenAbfragen');
    for (let i = 0; i < 3; i++) {
      const response = await order(
        { order_type: 'batch', items: [{ pzn: PLAIN, quantity: 1 }] },
        credentials,
      );
      expect(response.statusCode).toBe(200);
    }
    expect(calls('vertragsdatenAbfragen')).toBe(before + 1);
    // Today's form (normal, default label) needs no contract at all.
    await order({ items: [{ pzn: PLAIN, quantity: 1 }] }, login());
    expect(calls('vertragsdatenAbfragen')).toBe(before + 1);
  });

  it('answers a dry run per sub-order with its type and next cut-off', async () => {
    const response = await gw.inject({
      method: 'POST',
      url: '/v1/orders',
      query: { dry_run: 'true' },
      body: { wholesaler: 'phoenix', sub_orders: THREE },
      credentials: login(),
    });
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json();
    expect(result.checks.sub_orders.map((c: { order_type: string }) => c.order_type)).toEqual([
      'normal',
      'batch',
      'special',
    ]);
    expect(
      result.checks.sub_orders.every(
        (c: { order_type_agreed: boolean; next_cutoff: unknown }) => c.order_type_agreed,
      ),
    ).toBe(true);
    expect(result.sub_orders.map((s: { status: string }) => s.status)).toEqual([
      'dry_run',
      'dry_run',
      'dry_run',
    ]);
  });

  it('keeps the taken sub-orders when the wholesaler refuses one, and says the order was placed in part', async () => {
    const credentials = login();
    const response = await order(
      {
        sub_orders: [
          { items: [{ pzn: PLAIN, quantity: 1 }] },
          { order_type: 'batch', items: [{ pzn: SCENARIO_PZNS.ORDER_REJECTED.pzn, quantity: 1 }] },
        ],
      },
      credentials,
    );
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json();
    expect(result).toMatchObject({ status: 'confirmed', placement_status: 'partially_confirmed' });
    expect(result.sub_orders[0]).toMatchObject({ status: 'confirmed', error: null });
    expect(result.sub_orders[1]).toMatchObject({ status: 'rejected', error: { error_code: 'A20' } });
    const status = await gw.inject({
      url: `/v1/orders/${result.order_id}/status`,
      query: { wholesaler: 'phoenix' },
      credentials,
    });
    expect(status.json()).toMatchObject({
      placement_status: 'partially_confirmed',
      answer_status: 'available',
    });
    expect(status.json().sub_orders.map((s: { status: string }) => s.status)).toEqual([
      'confirmed',
      'rejected',
    ]);
    // Every sub-order refused: the order is rejected, 422 naming it.
    const all = await order({ items: [{ pzn: SCENARIO_PZNS.ORDER_REJECTED.pzn, quantity: 1 }] }, credentials);
    expect(all.statusCode).toBe(422);
    expect(all.json()).toMatchObject({ error: 'order_rejected', order_id: expect.stringMatching(/^GW-/) });
  });

  it('takes a night-mode order with every sub-order pending, waiting rather than lost', async () => {
    const credentials = login();
    const response = await order(
      {
        sub_orders: [
          { items: [{ pzn: SCENARIO_PZNS.NIGHT_MODE.pzn, quantity: 1 }] },
          { order_type: 'batch', items: [{ pzn: PLAIN, quantity: 1 }] },
        ],
      },
      credentials,
    );
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json();
    expect(result).toMatchObject({ status: 'queued_night_mode', placement_status: 'queued_night_mode' });
    expect(result.sub_orders.map((s: { status: string }) => s.status)).toEqual(['pending', 'pending']);
    const events = await gw.database.db
      .selectFrom('webhook_events')
      .select('payload')
      .where('type', '=', 'order.status_changed')
      .execute();
    const placed = events
      .map((e) => JSON.parse(e.payload).data)
      .filter((d) => d.order_id === result.order_id);
    expect(placed).toMatchObject([
      { status: 'expired', answer_status: 'pending', placement_status: 'queued_night_mode' },
    ]);
    const status = await gw.inject({
      url: `/v1/orders/${result.order_id}/status`,
      query: { wholesaler: 'phoenix' },
      credentials,
    });
    expect(status.json()).toMatchObject({ status: 'expired', answer_status: 'pending' });

    const processed = await gw.inject({
      method: 'POST',
      url: `/v1/test_helpers/orders/${result.order_id}/process`,
      credentials: null,
    });
    expect(processed.statusCode, processed.body).toBe(200);
    const after = await gw.inject({
      url: `/v1/orders/${result.order_id}/status`,
      query: { wholesaler: 'phoenix' },
      credentials,
    });
    expect(after.json()).toMatchObject({
      status: 'available',
      answer_status: 'available',
      placement_status: 'confirmed',
    });
    expect(after.json().sub_orders.map((s: { status: string }) => s.status)).toEqual([
      'confirmed',
      'confirmed',
    ]);
    // The helper's processing issued a note per sub-order: the record shows both delivered.
    const record = await gw.inject({ url: `/v1/orders/${result.order_id}`, credentials: null });
    expect(
      record
        .json()
        .sub_orders.map((s: { items: { quantity_delivered: number }[] }) => s.items[0]!.quantity_delivered),
    ).toEqual([1, 1]);
    // The deliver helper issues one more note per sub-order and tour.
    const delivered = await gw.inject({
      method: 'POST',
      url: `/v1/test_helpers/orders/${result.order_id}/deliver`,
      body: {},
      credentials: null,
    });
    expect(delivered.statusCode, delivered.body).toBe(200);
    expect(delivered.json().deliveries).toHaveLength(2);
  });

  it('replays a retry with the same key, and a changed order with the key is refused', async () => {
    const credentials = login();
    const key = randomUUID();
    const before = calls('bestellen');
    const first = await order({ sub_orders: THREE }, credentials, { 'idempotency-key': key });
    const again = await order({ sub_orders: THREE }, credentials, { 'idempotency-key': key });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(calls('bestellen')).toBe(before + 1);
    const changed = await order({ sub_orders: THREE.slice(0, 2) }, credentials, { 'idempotency-key': key });
    expect(changed.json().error).toBe('idempotency_key_reused');
  });

  it('keeps a record of what arrived per line, and lists the orders without calling the wholesaler', async () => {
    const key = await gw.createKey('test');
    const credentials = login();
    const placed = await gw.inject({
      method: 'POST',
      url: '/v1/orders',
      key: key.secret,
      body: {
        wholesaler: 'phoenix',
        sub_orders: [
          {
            items: [
              { pzn: PLAIN, quantity: 2 },
              { pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity: 4 },
            ],
          },
          { order_type: 'batch', items: [{ pzn: SCENARIO_PZNS.SPLIT_DELIVERY.pzn, quantity: 5 }] },
        ],
      },
      credentials,
    });
    expect(placed.statusCode, placed.body).toBe(200);
    const orderId = placed.json().order_id;
    const soapCalls = gw.mocks.sandbox.requestCount();

    const record = await gw.inject({ url: `/v1/orders/${orderId}`, key: key.secret, credentials: null });
    expect(record.statusCode, record.body).toBe(200);
    expect(gw.mocks.sandbox.requestCount()).toBe(soapCalls);
    const body = record.json();
    expect(body.fulfilment).toMatchObject({
      status: 'fulfilled',
      quantity_ordered: 11,
      quantity_confirmed: 11,
      quantity_delivered: 9,
      quantity_short: 2,
    });
    const [plain, short] = body.sub_orders[0].items;
    expect(plain).toMatchObject({
      quantity_ordered: 2,
      quantity_confirmed: 2,
      quantity_delivered: 2,
      quantity_short: 0,
    });
    expect(plain.delivered[0]).toMatchObject({
      quantity: 2,
      batch: expect.any(String),
      expiry_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      inferred: false,
    });
    expect(short).toMatchObject({ quantity_delivered: 2, quantity_short: 2 });
    const split = body.sub_orders[1].items[0];
    expect(split).toMatchObject({ quantity_delivered: 5, quantity_short: 0 });
    expect(split.tracking_numbers).toHaveLength(2);
    expect(split.delivered.map((d: { quantity: number }) => d.quantity)).toEqual([3, 2]);
    expect(body.history.at(-1)).toMatchObject({ placement_status: 'confirmed', status: 'available' });

    const fulfilled = await gw.database.db
      .selectFrom('webhook_events')
      .select('payload')
      .where('type', '=', 'order.fulfilled')
      .where('account_id', '=', key.accountId)
      .execute();
    expect(fulfilled.map((e) => JSON.parse(e.payload).data)).toEqual([body]);

    const list = (query: Record<string, string>) =>
      gw.inject({ url: '/v1/orders', key: key.secret, credentials: null, query }).then((r) => r.json());
    expect((await list({})).orders.map((o: { order_id: string }) => o.order_id)).toEqual([orderId]);
    expect((await list({ pzn: SCENARIO_PZNS.SPLIT_DELIVERY.pzn })).orders).toHaveLength(1);
    expect((await list({ pzn: '09990010' })).orders).toHaveLength(0);
    expect((await list({ placement_status: 'rejected' })).orders).toHaveLength(0);
    expect(
      (await list({ wholesaler: 'phoenix', placement_status: 'confirmed' })).orders[0].sub_orders,
    ).toHaveLength(2);

    const other = await gw.createKey('test');
    const foreign = await gw.inject({ url: `/v1/orders/${orderId}`, key: other.secret, credentials: null });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error).toBe('order_not_found');
  });

  it('pages the listing newest first without gaps', async () => {
    const key = await gw.createKey('test');
    const credentials = login();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const placed = await gw.inject({
        method: 'POST',
        url: '/v1/orders',
        key: key.secret,
        body: { wholesaler: 'phoenix', items: [{ pzn: PLAIN, quantity: 1 + i }] },
        credentials,
      });
      ids.unshift(placed.json().order_id);
    }
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await gw.inject({
        url: '/v1/orders',
        key: key.secret,
        credentials: null,
        query: { limit: '2', ...(after === undefined ? {} : { starting_after: after }) },
      });
      const { orders, has_more } = page.json();
      seen.push(...orders.map((o: { order_id: string }) => o.order_id));
      if (!has_more) break;
      after = seen.at(-1);
    }
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toHaveLength(5);
  });
});
