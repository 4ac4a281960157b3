import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway, type TestKey } from '../../../test/gateway.js';
import { SCENARIO_PZNS } from '../../mock/index.js';
import { pruneWebhookHistory } from '../../store/webhook-outbox.js';
import { type Receiver, startReceiver } from '../../webhooks/test-support/receiver.js';

interface FeedEvent {
  id: string;
  type: string;
  created_at: string;
  wholesaler: string;
  customer_id: string | null;
  livemode: boolean;
  data: Record<string, unknown>;
}

describeEachDialect('GET /v1/events', (getDatabase) => {
  let gw: Gateway;
  let receiver: Receiver;

  beforeAll(async () => {
    gw = await startGateway({
      database: getDatabase(),
      env: { ALLOW_PRIVATE_ENDPOINTS: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' },
    });
    gw.deps.webhooks.worker.start();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await gw.deps.webhooks.close({ timeoutMs: 1_000 });
    await gw.close();
    await receiver.close();
  });

  /** A pharmacy of its own at the sandbox (fresh notices), placing an order with a shortage at `wholesaler`. */
  async function orderAndCollect(key: TestKey | 'test', wholesaler = 'phoenix') {
    const as = {
      key: key === 'test' ? 'test' : key.secret,
      credentials: { username: `apo${randomUUID().slice(0, 8)}`, password: 'sandbox-secret' },
    };
    const order = await gw.inject({
      ...as,
      url: '/v1/orders',
      body: {
        wholesaler,
        items: [
          { pzn: '04114918', quantity: 2 },
          { pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity: 4 },
        ],
      },
    });
    expect(order.statusCode, order.body).toBe(200);
    const deliveries = await gw.inject({ ...as, url: '/v1/deliveries', query: { wholesaler } });
    expect(deliveries.statusCode).toBe(200);
    return { orderId: order.json().order_id as string, customer: as.credentials.username };
  }

  async function list(key: TestKey | 'test' | 'live', query: Record<string, string> = {}) {
    const response = await gw.inject({
      key: typeof key === 'string' ? key : key.secret,
      credentials: null,
      url: '/v1/events',
      query,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { events: FeedEvent[]; has_more: boolean };
  }

  /** Every page with `limit`, following `starting_after`. */
  async function allPages(key: TestKey, query: Record<string, string>) {
    const pages: FeedEvent[][] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await list(key, {
        ...query,
        ...(startingAfter === undefined ? {} : { starting_after: startingAfter }),
      });
      pages.push(page.events);
      if (!page.has_more) return pages;
      startingAfter = page.events.at(-1)!.id;
    }
  }

  const newestFirst = (events: FeedEvent[]) =>
    events.every((e, i) => i === 0 || Date.parse(events[i - 1]!.created_at) >= Date.parse(e.created_at));

  it('holds every event of the account and mode without a subscription, newest first', async () => {
    const key = await gw.createKey('test');
    const { orderId, customer } = await orderAndCollect(key);
    const { events, has_more } = await list(key);
    expect(has_more).toBe(false);
    const types = events.map((e) => e.type).sort();
    expect(types).toContain('order.status_changed');
    expect(types).toContain('delivery.received');
    expect(types).toContain('delivery.shortage');
    expect(newestFirst(events)).toBe(true);
    for (const event of events) {
      expect(event).toMatchObject({
        id: expect.stringMatching(/^evt_/),
        livemode: false,
        wholesaler: 'phoenix',
      });
      expect(event.customer_id).toBe(customer);
    }
    const statusChange = events.find((e) => e.type === 'order.status_changed')!;
    expect(statusChange.data).toMatchObject({
      order_id: orderId,
      status: 'available',
      previous_status: null,
    });
    // No subscription: no delivery was queued for any of them.
    const queued = await gw.database.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('account_id', '=', key.accountId)
      .execute();
    expect(queued).toEqual([]);
  });

  it('answers with each event byte for byte as the webhook receiver got it', async () => {
    const key = await gw.createKey('test');
    const created = await gw.inject({
      key: key.secret,
      url: '/v1/webhooks',
      body: {
        url: receiver.url,
        wholesaler: 'phoenix',
        events: ['delivery.received', 'delivery.shortage', 'order.status_changed', 'order.fulfilled'],
      },
    });
    expect(created.statusCode).toBe(201);
    const before = receiver.requests.length;
    await orderAndCollect(key);
    const { events } = await list(key);
    const received = (await receiver.waitFor(before + events.length, 10_000)).slice(before);
    expect(received).toHaveLength(events.length);
    for (const request of received) {
      const id = request.headers['webhook-id'] as string;
      const one = await gw.inject({ key: key.secret, credentials: null, url: `/v1/events/${id}` });
      expect(one.statusCode).toBe(200);
      expect(one.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(one.body).toBe(request.body);
      expect(events.find((e) => e.id === id)).toEqual(JSON.parse(request.body));
    }
  });

  it('pages with starting_after without gaps or repeats, and filters by type, wholesaler and time', async () => {
    const key = await gw.createKey('test');
    await orderAndCollect(key, 'phoenix');
    await orderAndCollect(key, 'aep');
    const { events: all } = await list(key, { limit: '100' });
    expect(new Set(all.map((e) => e.wholesaler))).toEqual(new Set(['phoenix', 'aep']));
    expect(all.length).toBeGreaterThan(4);

    const pages = await allPages(key, { limit: '2' });
    expect(pages.slice(0, -1).every((p) => p.length === 2)).toBe(true);
    expect(pages.flat().map((e) => e.id)).toEqual(all.map((e) => e.id));

    const shortages = await list(key, { type: 'delivery.shortage', limit: '100' });
    expect(shortages.events.map((e) => e.id)).toEqual(
      all.filter((e) => e.type === 'delivery.shortage').map((e) => e.id),
    );
    expect(shortages.events.length).toBeGreaterThan(0);
    const aep = await allPages(key, { wholesaler: 'aep', limit: '1' });
    expect(aep.flat().map((e) => e.id)).toEqual(all.filter((e) => e.wholesaler === 'aep').map((e) => e.id));
    expect((await list(key, { wholesaler: 'sanacorp' })).events).toEqual([]);

    // A boundary at an event's own time: created_after includes it, created_before leaves it out.
    const pivot = all[Math.floor(all.length / 2)]!;
    const at = pivot.created_at;
    const after = await list(key, { created_after: at, limit: '100' });
    const beforeIt = await list(key, { created_before: at, limit: '100' });
    expect(after.events.map((e) => e.id)).toContain(pivot.id);
    expect(beforeIt.events.map((e) => e.id)).not.toContain(pivot.id);
    expect([...after.events, ...beforeIt.events].map((e) => e.id)).toEqual(all.map((e) => e.id));
    for (const e of after.events) expect(Date.parse(e.created_at)).toBeGreaterThanOrEqual(Date.parse(at));
    for (const e of beforeIt.events) expect(Date.parse(e.created_at)).toBeLessThan(Date.parse(at));
    // Any time zone: the same instant written with an offset.
    const shifted = new Date(Date.parse(at) + 3_600_000).toISOString().replace('Z', '+01:00');
    expect((await list(key, { created_after: shifted, limit: '100' })).events).toEqual(after.events);
    const combined = await list(key, { type: 'delivery.received', wholesaler: 'aep', created_after: at });
    expect(combined.events.map((e) => e.id)).toEqual(
      after.events.filter((e) => e.type === 'delivery.received' && e.wholesaler === 'aep').map((e) => e.id),
    );
  });

  it('keeps another account’s and the other mode’s events out of the list and answers 404 for them', async () => {
    await orderAndCollect('test');
    const own = (await list('test')).events;
    expect(own.length).toBeGreaterThan(0);
    const stranger = await gw.createKey('test');
    const otherMode = gw.keys.live;
    expect(otherMode.accountId).toBe(gw.keys.test.accountId);
    const ids = new Set(own.map((e) => e.id));
    expect((await list(stranger)).events.filter((e) => ids.has(e.id))).toEqual([]);
    expect((await list(otherMode)).events.filter((e) => ids.has(e.id))).toEqual([]);
    for (const key of [stranger, otherMode]) {
      const one = await gw.inject({ key: key.secret, credentials: null, url: `/v1/events/${own[0]!.id}` });
      expect(one.statusCode).toBe(404);
      expect(one.json()).toMatchObject({ error: 'resource_not_found', param: 'id' });
      // Their cursor is no cursor here: an empty page.
      expect(await list(key, { starting_after: own[0]!.id })).toEqual({ events: [], has_more: false });
    }
  });

  it('answers 404 for an unknown event id and 400 for malformed ids and filters', async () => {
    const unknown = await gw.inject({ credentials: null, url: '/v1/events/evt_0000000000000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({
      error: 'resource_not_found',
      message: 'No event evt_0000000000000000000000 for this API key.',
    });
    const malformed = await gw.inject({ credentials: null, url: '/v1/events/whd_123' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ error: 'invalid_request', param: 'id' });
    for (const [param, value] of [
      ['limit', '0'],
      ['limit', '101'],
      ['starting_after', 'nope'],
      ['type', 'ping'],
      ['created_after', 'yesterday'],
      ['created_before', '2026-01-05'],
    ] as const) {
      const response = await gw.inject({ credentials: null, url: '/v1/events', query: { [param]: value } });
      expect(response.statusCode, `${param}=${value}`).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_request', param });
    }
  });

  it('leaves test pings out of the feed', async () => {
    const key = await gw.createKey('test');
    const created = await gw.inject({
      key: key.secret,
      url: '/v1/webhooks',
      body: { url: receiver.url, wholesaler: 'phoenix', events: ['delivery.received'] },
    });
    const ping = await gw.inject({
      key: key.secret,
      credentials: null,
      method: 'POST',
      url: `/v1/webhooks/${created.json().id}/test`,
    });
    expect(ping.statusCode).toBe(200);
    expect((await list(key)).events).toEqual([]);
    const pinged = await gw.inject({
      key: key.secret,
      credentials: null,
      url: `/v1/events/${ping.json().event_id}`,
    });
    expect(pinged.statusCode).toBe(404);
  });

  it('drops events from the feed once the webhook retention prunes them', async () => {
    const key = await gw.createKey('test');
    await orderAndCollect(key);
    const { events } = await list(key);
    expect(events.length).toBeGreaterThan(0);
    const newest = Date.parse(events[0]!.created_at);
    // Nothing newer than the cut-off is touched.
    await pruneWebhookHistory(gw.database.db, Date.parse(events.at(-1)!.created_at));
    expect((await list(key)).events).toEqual(events);
    await pruneWebhookHistory(gw.database.db, newest + 1);
    expect(await list(key)).toEqual({ events: [], has_more: false });
    const gone = await gw.inject({ key: key.secret, credentials: null, url: `/v1/events/${events[0]!.id}` });
    expect(gone.statusCode).toBe(404);
  });
});
