import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway, type TestKey } from '../../../test/gateway.js';
import { silentLogger } from '../../../test/logger.js';
import { until } from '../../../test/until.js';
import { SCENARIO_PZNS } from '../../mock/index.js';
import { type Receiver, startReceiver } from '../../webhooks/test-support/receiver.js';
import { verifyWebhook, type WebhookEvent } from '../../webhooks/verify.js';
import { announceBreakerChanges, createStatusAnnouncer } from '../../wholesalers/status/announcer.js';

/**
 * The test helpers through real HTTP, the real sandbox mock and a real database: each helper does what
 * it says on the sandbox and raises its events at once, signed to a webhook receiver, and only for test
 * keys and the caller's own sandbox. Every test uses an account of its own.
 */

const NIGHT = SCENARIO_PZNS.NIGHT_MODE.pzn;
const IN_STOCK = '04114918';

describeEachDialect('test helpers', (getDatabase) => {
  let gw: Gateway;
  let receiver: Receiver;
  let stopAnnouncing: () => void;

  beforeAll(async () => {
    gw = await startGateway({
      database: getDatabase(),
      env: { ALLOW_PRIVATE_ENDPOINTS: 'true' },
      // Night orders wait for the helper, not for a timer.
      mockOptions: { sandbox: { nightOrderDelayMs: 3_600_000 } },
    });
    // As server.ts wires it (wholesalers/status/watch.ts): the one announcer hears the status feed.
    const announcer = createStatusAnnouncer({
      db: gw.database.db,
      clock: gw.deps.clock,
      wake: gw.deps.webhooks.wake,
      logger: silentLogger,
    });
    stopAnnouncing = announceBreakerChanges(gw.deps.wholesalerStatus, announcer);
    gw.deps.webhooks.worker.start();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    // After a failed start, close what was started.
    stopAnnouncing?.();
    await gw?.deps.webhooks.close({ timeoutMs: 1_000 });
    await gw?.close();
    await receiver?.close();
  });

  /** A new account with a subscription to every event of phoenix; its verified deliveries. */
  async function newPharmacy(): Promise<{ key: TestKey; events: () => WebhookEvent[] }> {
    const key = await gw.createKey('test');
    const created = await gw.inject({
      url: '/v1/webhooks',
      key: key.secret,
      body: {
        url: `${receiver.url}/${key.accountId}`,
        wholesaler: 'phoenix',
        events: [
          'order.status_changed',
          'delivery.received',
          'delivery.shortage',
          'wholesaler.status_changed',
        ],
      },
    });
    expect(created.statusCode).toBe(201);
    const secret = created.json().signing_secret as string;
    const events = () =>
      receiver.requests
        .filter((r) => r.path === `/hooks/${key.accountId}`)
        .map((r) => verifyWebhook(r.body, r.headers, secret));
    return { key, events };
  }

  function eventually<T>(read: () => T, done: (value: T) => boolean, what: string): Promise<T> {
    return until(
      what,
      () => {
        const value = read();
        return done(value) ? value : undefined;
      },
      10_000,
    );
  }

  /** Every webhook of the account's events is delivered: nothing more is on its way to the receiver. */
  function allDelivered(accountId: string): Promise<true> {
    return until(
      'every webhook delivered',
      async () => {
        const open = await gw.database.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('account_id', '=', accountId)
          .where('status', '!=', 'delivered')
          .execute();
        return open.length === 0;
      },
      10_000,
    );
  }

  const place = async (key: TestKey, items: { pzn: string; quantity: number }[]) => {
    const response = await gw.inject({
      url: '/v1/orders',
      key: key.secret,
      body: { wholesaler: 'phoenix', items },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { order_id: string; status: string };
  };

  it('processes a night-mode order: order.status_changed and delivery.received arrive signed, at once', async () => {
    const { key, events } = await newPharmacy();
    const order = await place(key, [
      { pzn: NIGHT, quantity: 2 },
      { pzn: IN_STOCK, quantity: 3 },
    ]);
    expect(order.status).toBe('queued_night_mode');

    const processed = await gw.inject({
      url: `/v1/test_helpers/orders/${order.order_id}/process`,
      key: key.secret,
      credentials: null,
      method: 'POST',
    });
    expect(processed.statusCode, processed.body).toBe(200);
    const body = processed.json();
    expect(body.order).toMatchObject({
      order_id: order.order_id,
      status: 'available',
      placement_status: 'confirmed',
    });
    expect(body.deliveries.length).toBeGreaterThan(0);

    const seen = await eventually(
      events,
      (list) =>
        list.some(
          (e) => e.type === 'order.status_changed' && (e.data as { status: string }).status === 'available',
        ) && list.filter((e) => e.type === 'delivery.received').length === body.deliveries.length,
      'order.status_changed and delivery.received',
    );
    const changed = seen.find(
      (e) => e.type === 'order.status_changed' && (e.data as { status: string }).status === 'available',
    );
    expect(changed!.data).toMatchObject({ order_id: order.order_id, previous_status: 'expired' });
    const received = seen
      .filter((e) => e.type === 'delivery.received')
      .map((e) => (e.data as { tracking_number: string }).tracking_number);
    expect(received.sort()).toEqual(
      body.deliveries.map((d: { tracking_number: string }) => d.tracking_number).sort(),
    );

    // Processed once: again is a conflict.
    const again = await gw.inject({
      url: `/v1/test_helpers/orders/${order.order_id}/process`,
      key: key.secret,
      method: 'POST',
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('conflict');
  });

  it('delivers with shortages: delivery.received and delivery.shortage without any GET /v1/deliveries, and a later read records nothing twice', async () => {
    const { key, events } = await newPharmacy();
    const order = await place(key, [{ pzn: IN_STOCK, quantity: 4 }]);
    expect(order.status).toBe('confirmed');
    // The order's own notice exists as soon as it is placed: its event is recorded then.
    await eventually(
      events,
      (list) => list.some((e) => e.type === 'delivery.received'),
      'the placement’s notice',
    );

    const delivered = await gw.inject({
      url: `/v1/test_helpers/orders/${order.order_id}/deliver`,
      key: key.secret,
      body: { shortages: true },
    });
    expect(delivered.statusCode, delivered.body).toBe(200);
    const [notice] = delivered.json().deliveries;
    expect(notice).toMatchObject({ has_shortages: true });
    const number = notice.tracking_number as string;
    const about = (type: string) =>
      events().filter(
        (e) => e.type === type && (e.data as { tracking_number: string }).tracking_number === number,
      );
    await eventually(
      () => about('delivery.shortage'),
      (list) => list.length === 1,
      'delivery.shortage',
    );
    expect(about('delivery.received')).toHaveLength(1);

    const listed = await gw.inject({
      url: '/v1/deliveries',
      key: key.secret,
      query: { wholesaler: 'phoenix' },
    });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().deliveries.map((d: { tracking_number: string }) => d.tracking_number)).toContain(
      number,
    );
    const feed = await gw.inject({
      url: '/v1/events',
      key: key.secret,
      query: { type: 'delivery.received' },
    });
    expect(feed.json().events).toHaveLength(2);
    await allDelivered(key.accountId);
    expect(about('delivery.received')).toHaveLength(1);
    expect(about('delivery.shortage')).toHaveLength(1);
  });

  it('takes the sandbox wholesaler down and up: calls fail with 503 wholesaler_unavailable meanwhile, one event per real change', async () => {
    const { key, events } = await newPharmacy();
    const availability = () =>
      gw.inject({
        url: '/v1/availability',
        key: key.secret,
        body: { wholesaler: 'phoenix', items: [{ pzn: IN_STOCK, quantity: 1 }] },
      });
    const statusEvents = () =>
      events()
        .filter((e) => e.type === 'wholesaler.status_changed')
        .map((e) => (e.data as { status: string }).status);

    const down = await gw.inject({
      url: '/v1/test_helpers/wholesalers/phoenix/down',
      key: key.secret,
      method: 'POST',
    });
    expect(down.statusCode, down.body).toBe(200);
    expect(down.json()).toEqual({ wholesaler: 'phoenix', status: 'down', changed: true });
    const failed = await availability();
    expect(failed.statusCode).toBe(503);
    expect(failed.json()).toMatchObject({ error: 'wholesaler_unavailable', upstream: { http_status: 503 } });
    expect(Number(failed.headers['retry-after'])).toBeGreaterThan(0);
    await eventually(statusEvents, (list) => list.length === 1, 'wholesaler.status_changed down');
    expect(statusEvents()).toEqual(['down']);

    // Down again changes nothing: no event.
    const twice = await gw.inject({
      url: '/v1/test_helpers/wholesalers/phoenix/down',
      key: key.secret,
      method: 'POST',
    });
    expect(twice.json()).toMatchObject({ changed: false });
    // Another account's sandbox is not affected.
    const other = await gw.createKey('test');
    const theirs = await gw.inject({
      url: '/v1/availability',
      key: other.secret,
      body: { wholesaler: 'phoenix', items: [{ pzn: IN_STOCK, quantity: 1 }] },
    });
    expect(theirs.statusCode).toBe(200);

    const up = await gw.inject({
      url: '/v1/test_helpers/wholesalers/phoenix/up',
      key: key.secret,
      method: 'POST',
    });
    expect(up.json()).toEqual({ wholesaler: 'phoenix', status: 'up', changed: true });
    expect((await availability()).statusCode).toBe(200);
    await eventually(statusEvents, (list) => list.length === 2, 'wholesaler.status_changed up');
    await allDelivered(key.accountId);
    expect(statusEvents()).toEqual(['down', 'up']);
  });

  it('refuses live keys with 403 test_mode_required', async () => {
    const calls = [
      { url: '/v1/test_helpers/orders/GW-4fJ8kQ2mN7pR1sT5vX9zA3/process', method: 'POST' as const },
      { url: '/v1/test_helpers/orders/GW-4fJ8kQ2mN7pR1sT5vX9zA3/deliver', body: { shortages: true } },
      { url: '/v1/test_helpers/wholesalers/phoenix/down', method: 'POST' as const },
    ];
    for (const call of calls) {
      const response = await gw.inject({ ...call, key: 'live' });
      expect(response.statusCode, call.url).toBe(403);
      expect(response.json()).toMatchObject({ error: 'test_mode_required', error_code: '1106' });
    }
  });

  it("gives another account's order 404, and refuses test servers and unprocessed orders", async () => {
    const { key } = await newPharmacy();
    const order = await place(key, [{ pzn: NIGHT, quantity: 1 }]);
    const stranger = await gw.createKey('test');
    for (const action of ['process', 'deliver']) {
      const response = await gw.inject({
        url: `/v1/test_helpers/orders/${order.order_id}/${action}`,
        key: stranger.secret,
        method: 'POST',
        ...(action === 'deliver' ? { body: {} } : {}),
      });
      expect(response.statusCode).toBe(404);
      expect(response.json().error).toBe('order_not_found');
    }
    const early = await gw.inject({
      url: `/v1/test_helpers/orders/${order.order_id}/deliver`,
      key: key.secret,
      body: {},
    });
    expect(early.statusCode).toBe(409);
    expect(early.json().message).toContain('process it first');
    const testServer = await gw.inject({
      url: '/v1/test_helpers/wholesalers/phoenix_test/down',
      key: key.secret,
      method: 'POST',
    });
    expect(testServer.statusCode).toBe(422);
    expect(testServer.json().error).toBe('operation_not_supported');
    const unknown = await gw.inject({
      url: '/v1/test_helpers/wholesalers/nobody/down',
      key: key.secret,
      method: 'POST',
    });
    expect(unknown.statusCode).toBe(404);
  });
});
