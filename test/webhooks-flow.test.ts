import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { EventType } from '../src/core/event-types.js';
import type { AppDeps } from '../src/http/app-deps.js';
import { eventSchema } from '../src/http/schemas/webhook-events.js';
import type { GatewayApp } from '../src/http/types.js';
import { systemClock } from '../src/lib/clock.js';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { createLogger } from '../src/observability/logger.js';
import { startServer } from '../src/server.js';
import { openDatabase } from '../src/store/database.js';
import { recordEvent } from '../src/webhooks/events/record.js';
import { sampleNotice } from '../src/webhooks/test-support/fixtures.js';
import { type Receiver, startReceiver } from '../src/webhooks/test-support/receiver.js';
import { verifyWebhook, type WebhookEvent } from '../src/webhooks/verify.js';
import { buildTestApp, createTestKey } from './app.js';
import { describeEachDialect } from './db.js';
import { type Gateway, startGateway } from './gateway.js';
import { until } from './until.js';

/** Every webhook of the account's events is delivered: nothing more is on its way to a receiver. */
function allDelivered(db: AppDeps['database']['db'], accountId: string): Promise<true> {
  return until(
    'every webhook delivered',
    async () => {
      const open = await db
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

describeEachDialect('webhook flow: event in a transaction → signed delivery', (getDatabase) => {
  let app: GatewayApp;
  let deps: AppDeps;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ app, deps } = await buildTestApp(getDatabase(), {
      env: { ALLOW_PRIVATE_ENDPOINTS: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' },
    }));
    deps.webhooks.worker.start();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await deps.webhooks.close({ timeoutMs: 1_000 });
    await app.close();
    await receiver.close();
  });

  it('delivers nothing for a rolled-back transaction and a verifiable event for a committed one', async () => {
    const { secret, accountId } = await createTestKey(getDatabase());
    const created = await app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { 'x-api-key': secret },
      payload: { url: receiver.url, wholesaler: 'phoenix', events: ['delivery.received'] },
    });
    expect(created.statusCode).toBe(201);
    const { signing_secret: signingSecret } = created.json();
    const event = {
      accountId,
      mode: 'test' as const,
      type: 'delivery.received' as const,
      wholesaler: 'phoenix',
    };
    const recordDeps = { clock: deps.clock, wake: deps.webhooks.wake };
    const { db } = deps.database;

    await db
      .transaction()
      .execute(async (trx) => {
        await recordEvent(trx, { ...event, customerId: 'rolled-back', data: sampleNotice }, recordDeps);
        throw new Error('the notice could not be stored');
      })
      .catch(() => {});
    const committed = await db.transaction().execute(async (trx) => {
      return recordEvent(trx, { ...event, customerId: '4711', data: sampleNotice }, recordDeps);
    });

    const [delivery] = await receiver.waitFor(1, 5_000);
    const verified = verifyWebhook(delivery!.body, delivery!.headers, signingSecret);
    expect(verified).toEqual(committed.event);
    expect(verified.customer_id).toBe('4711');
    await allDelivered(db, accountId);
    expect(receiver.requests).toHaveLength(1);
  });

  it('keeps the events raised while a subscription is paused and sends them, signed, as soon as PATCH active true resumes it', async () => {
    // Its own receiver: the test counts every request that reaches it.
    const receiver = await startReceiver();
    try {
      const { secret, accountId } = await createTestKey(getDatabase());
      const created = await app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: { 'x-api-key': secret },
        payload: {
          url: receiver.url,
          wholesaler: 'phoenix',
          events: ['delivery.received', 'order.status_changed'],
        },
      });
      expect(created.statusCode).toBe(201);
      const { id, signing_secret: signingSecret } = created.json();
      const patch = (payload: object) =>
        app.inject({ method: 'PATCH', url: `/v1/webhooks/${id}`, headers: { 'x-api-key': secret }, payload });

      const paused = await patch({ active: false });
      expect(paused.statusCode).toBe(200);
      expect(paused.json()).toMatchObject({ active: false });
      const recordDeps = { clock: deps.clock, wake: deps.webhooks.wake };
      const recorded = [
        await recordEvent(
          deps.database.db,
          {
            accountId,
            mode: 'test',
            type: 'delivery.received',
            wholesaler: 'phoenix',
            customerId: '4711',
            data: sampleNotice,
          },
          recordDeps,
        ),
        await recordEvent(
          deps.database.db,
          {
            accountId,
            mode: 'test',
            type: 'order.status_changed',
            wholesaler: 'phoenix',
            data: { order_id: 'GW-1' },
          },
          recordDeps,
        ),
      ];
      // Nothing is due: a pass of the worker over every due delivery attempts none.
      expect(await deps.webhooks.worker.drain()).toBe(0);
      expect(receiver.requests).toHaveLength(0);

      const resumedAt = Date.now();
      const resumed = await patch({ active: true });
      expect(resumed.statusCode).toBe(200);
      expect(resumed.json()).toMatchObject({ active: true, disabled_reason: null });
      const requests = await receiver.waitFor(2, 3_000);
      expect(Date.now() - resumedAt).toBeLessThan(1_000);
      const events = requests.map((request) => verifyWebhook(request.body, request.headers, signingSecret));
      expect(events.map((e) => e.id).sort()).toEqual(recorded.map((r) => r.event.id).sort());
      expect(events.map((e) => e.type).sort()).toEqual(['delivery.received', 'order.status_changed']);
    } finally {
      await receiver.close();
    }
  });
});

interface Delivered {
  event: WebhookEvent;
  headers: IncomingHttpHeaders;
}

describeEachDialect('webhook flow: sandbox order → delivery notice → signed events', (getDatabase) => {
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

  it('delivers delivery.received, delivery.shortage and order.status_changed once each, signed, with the resources as the API shows them', async () => {
    const key = await gw.createKey('test');
    const credentials = { username: `apo${randomUUID().slice(0, 8)}`, password: 'sandbox-secret' };
    const as = { key: key.secret, credentials };
    const created = await gw.inject({
      ...as,
      url: '/v1/webhooks',
      body: {
        url: receiver.url,
        wholesaler: 'phoenix',
        events: ['delivery.received', 'delivery.shortage', 'order.status_changed'],
      },
    });
    expect(created.statusCode).toBe(201);
    const secret: string = created.json().signing_secret;

    const order = await gw.inject({
      ...as,
      url: '/v1/orders',
      body: {
        wholesaler: 'phoenix',
        items: [
          { pzn: '04114918', quantity: 2 },
          { pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity: 4 },
        ],
      },
    });
    expect(order.statusCode, order.body).toBe(200);
    const orderId: string = order.json().order_id;
    const deliveries = await gw.inject({ ...as, url: '/v1/deliveries', query: { wholesaler: 'phoenix' } });
    expect(deliveries.statusCode).toBe(200);
    const notices: { tracking_number: string; has_shortages: boolean }[] = deliveries.json().deliveries;
    const withShortages = notices.filter((n) => n.has_shortages);
    expect(notices.length).toBeGreaterThan(0);
    expect(withShortages.length).toBeGreaterThan(0);

    const expected = 1 + notices.length + withShortages.length;
    const received = (await receiver.waitFor(expected, 10_000)).map(
      (request): Delivered => ({
        event: verifyWebhook(request.body, request.headers, secret),
        headers: request.headers,
      }),
    );
    for (const request of receiver.requests) {
      expect(verifyWebhook(request.body, request.headers, secret, { scheme: 'msv3' })).toBeDefined();
      expect(verifyWebhook(request.body, request.headers, secret, { scheme: 'both' })).toBeDefined();
    }
    for (const { event, headers } of received) {
      expect(event).toMatchObject({
        id: expect.stringMatching(/^evt_/),
        livemode: false,
        wholesaler: 'phoenix',
        customer_id: credentials.username,
      });
      expect(Date.parse(event.created_at)).not.toBeNaN();
      expect(headers).toMatchObject({ 'x-msv3-event': event.type, 'webhook-id': event.id });
      expect([...Value.Errors(eventSchema(event.type as EventType), event)], event.type).toEqual([]);
    }
    const dataOf = (type: string) => received.filter((r) => r.event.type === type).map((r) => r.event.data);
    const byNumber = (a: { tracking_number: string }, b: { tracking_number: string }) =>
      a.tracking_number.localeCompare(b.tracking_number);
    expect((dataOf('delivery.received') as typeof notices).sort(byNumber)).toEqual(
      [...notices].sort(byNumber),
    );
    expect((dataOf('delivery.shortage') as typeof notices).sort(byNumber)).toEqual(
      [...withShortages].sort(byNumber),
    );
    const status = await gw.inject({
      ...as,
      url: `/v1/orders/${orderId}/status`,
      query: { wholesaler: 'phoenix' },
    });
    expect(dataOf('order.status_changed')).toEqual([
      { ...status.json(), status: 'available', previous_status: null },
    ]);

    const again = await gw.inject({ ...as, url: '/v1/deliveries', query: { wholesaler: 'phoenix' } });
    expect(again.json().deliveries).toEqual(notices);
    await allDelivered(gw.database.db, key.accountId);
    expect(receiver.requests).toHaveLength(expected);
    const events = await gw.database.db
      .selectFrom('webhook_events')
      .select('type')
      .where('account_id', '=', key.accountId)
      .execute();
    // The feed also holds `order.fulfilled` (every line delivered or short), which nobody subscribed to.
    expect(events.map((e) => e.type).filter((type) => type !== 'order.fulfilled')).toHaveLength(expected);
    expect(events.filter((e) => e.type === 'order.fulfilled')).toHaveLength(1);
  });

  it('sends every event of every wholesaler to a subscription for `*` wholesalers and `*` events', async () => {
    receiver.requests.length = 0;
    const key = await gw.createKey('test');
    const credentials = { username: `apo${randomUUID().slice(0, 8)}`, password: 'sandbox-secret' };
    const as = { key: key.secret, credentials };
    const created = await gw.inject({
      ...as,
      url: '/v1/webhooks',
      body: { url: receiver.url, wholesaler: '*', events: ['delivery.received', '*'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ wholesaler: '*', events: ['*'] });
    const secret: string = created.json().signing_secret;

    const expectedTypes: string[] = [];
    for (const wholesaler of ['phoenix', 'aep']) {
      const order = await gw.inject({
        ...as,
        url: '/v1/orders',
        body: { wholesaler, items: [{ pzn: '04114918', quantity: 1 }] },
      });
      expect(order.statusCode, order.body).toBe(200);
      const deliveries = await gw.inject({ ...as, url: '/v1/deliveries', query: { wholesaler } });
      expect(deliveries.statusCode, deliveries.body).toBe(200);
      const notices: unknown[] = deliveries.json().deliveries;
      expect(notices.length).toBeGreaterThan(0);
      // Its notes deliver everything: the order is fulfilled too.
      expectedTypes.push(
        'order.status_changed',
        'order.fulfilled',
        ...notices.map(() => 'delivery.received'),
      );
    }
    const received = (await receiver.waitFor(expectedTypes.length, 10_000)).map((request) =>
      verifyWebhook(request.body, request.headers, secret),
    );
    expect(received.map((e) => e.type).sort()).toEqual(expectedTypes.sort());
    expect(new Set(received.map((e) => e.wholesaler))).toEqual(new Set(['phoenix', 'aep']));
  });
});

describe('the server runs the webhook worker', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-webhooks-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('delivers events committed by another process (polling) and stops with the server', async () => {
    const receiver = await startReceiver();
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    const lines: string[] = [];
    const server = await startServer({
      config: loadConfig({
        PORT: '0',
        DATABASE_URL: databaseUrl,
        ALLOW_PRIVATE_ENDPOINTS: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '50',
      }),
      logger: createLogger({ level: 'silent' }),
      print: (line) => lines.push(line),
    });
    try {
      const key = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];
      const created = await fetch(`${server.url}/v1/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, wholesaler: 'phoenix', events: ['order.status_changed'] }),
      });
      expect(created.status).toBe(201);
      const webhook = (await created.json()) as { signing_secret: string };

      const elsewhere = await openDatabase(databaseUrl);
      const account = await elsewhere.db.selectFrom('accounts').select('id').executeTakeFirstOrThrow();
      await recordEvent(
        elsewhere.db,
        {
          accountId: account.id,
          mode: 'test',
          type: 'order.status_changed',
          wholesaler: 'phoenix',
          data: { order_id: 'GW-1', status: 'available', previous_status: null, items: [] },
        },
        { clock: systemClock },
      );
      await elsewhere.close();
      const [delivery] = await receiver.waitFor(1, 5_000);
      expect(verifyWebhook(delivery!.body, delivery!.headers, webhook.signing_secret).type).toBe(
        'order.status_changed',
      );
    } finally {
      expect(await server.close()).toEqual({ clean: true });
      await receiver.close();
    }
  });

  it('delivers an event whose attempt a restart cut off, after the restart, with the same webhook-id', async () => {
    // The first attempt hangs at the receiver until the gateway gives it up; later ones succeed.
    const receiver = await startReceiver((request) =>
      request.headers['x-msv3-attempt'] === '1' ? { status: 200, hang: true } : { status: 200 },
    );
    const lines: string[] = [];
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: `sqlite:${join(folder, 'restart.db')}`,
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      SHUTDOWN_TIMEOUT_MS: '300',
    });
    const start = () =>
      startServer({ config, logger: createLogger({ level: 'silent' }), print: (line) => lines.push(line) });
    let server = await start();
    try {
      const key = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];
      const headers = {
        'x-api-key': key,
        'content-type': 'application/json',
        'x-msv3-username': 'apotheke1',
        'x-msv3-password': 'sandbox-secret',
      };
      const created = await fetch(`${server.url}/v1/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: receiver.url, wholesaler: 'phoenix', events: ['order.status_changed'] }),
      });
      const { signing_secret: secret } = (await created.json()) as { signing_secret: string };
      const order = await fetch(`${server.url}/v1/orders`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 1 }] }),
      });
      expect(order.status).toBe(200);
      const [cut] = await receiver.waitFor(1, 5_000);

      await server.close();
      server = await start();
      const [, redelivered] = await receiver.waitFor(2, 5_000);
      expect(redelivered!.headers).toMatchObject({
        'webhook-id': cut!.headers['webhook-id'],
        'x-msv3-attempt': '2',
      });
      const event = verifyWebhook(redelivered!.body, redelivered!.headers, secret, { scheme: 'both' });
      expect(event).toEqual(verifyWebhook(cut!.body, cut!.headers, secret));
      expect(event.data).toMatchObject({ order_id: ((await order.json()) as { order_id: string }).order_id });
    } finally {
      await server.close();
      await receiver.close();
    }
  });
});
