import type { Selectable } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import type { Tenant } from '../core/caller.js';
import { manualClock } from '../lib/clock.js';
import { newEventId, randomToken } from '../lib/ids.js';
import { createAccount } from './accounts.js';
import { sampleDeliveryRow, sampleSubscription } from './test-support/webhook-rows.js';
import { findDelivery, listDeliveries } from './webhook-delivery-log.js';
import { insertAttempts, insertEventWithDeliveries } from './webhook-outbox.js';
import { insertSubscription, type WebhookSubscription } from './webhook-subscriptions.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable } from './webhook-tables.js';

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

describeEachDialect('webhook delivery log', (getDatabase) => {
  const clock = manualClock(T0);

  async function newSubscription(tenant?: Tenant): Promise<WebhookSubscription> {
    const accountId =
      tenant?.accountId ?? (await createAccount(getDatabase().db, clock, { name: 'Apotheke' })).id;
    const s = sampleSubscription({ accountId, mode: tenant?.mode ?? 'test' }, T0);
    await insertSubscription(getDatabase().db, s);
    return s;
  }

  const scopeOf = (s: WebhookSubscription): Tenant => ({ accountId: s.accountId, mode: s.mode });

  /** One event of `type` with one delivery to `s`, created at `createdAt`. */
  async function addDelivery(
    s: WebhookSubscription,
    createdAt: number,
    overrides: Partial<Selectable<WebhookDeliveriesTable>> = {},
    type = 'delivery.received',
  ): Promise<Selectable<WebhookDeliveriesTable>> {
    const eventId = newEventId();
    const delivery = sampleDeliveryRow(eventId, s, createdAt, overrides);
    await insertEventWithDeliveries(
      getDatabase().db,
      {
        id: eventId,
        account_id: s.accountId,
        mode: s.mode,
        type,
        wholesaler: s.wholesaler,
        customer_id: null,
        payload: '{}',
        created_at: createdAt,
      },
      [delivery],
    );
    return delivery;
  }

  function attemptRow(
    delivery: Selectable<WebhookDeliveriesTable>,
    attempt: number,
    startedAt: number,
    overrides: Partial<Selectable<WebhookAttemptsTable>> = {},
  ): Selectable<WebhookAttemptsTable> {
    return {
      id: `wha_${randomToken(22)}`,
      delivery_id: delivery.id,
      subscription_id: delivery.subscription_id,
      attempt,
      trigger: 'schedule',
      started_at: startedAt,
      duration_ms: 30,
      status_code: 500,
      outcome: 'http_error',
      error: 'HTTP 500',
      ...overrides,
    };
  }

  it('shows a delivery with its event type, numeric fields and its attempts, newest attempt first', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const delivery = await addDelivery(
      s,
      T0,
      {
        status: 'delivered',
        attempts: 2,
        next_attempt_at: null,
        delivered_at: T0 + 2000,
        last_attempt_at: T0 + 2000,
        last_status: 200,
      },
      'delivery.shortage',
    );
    const first = attemptRow(delivery, 1, T0 + 10);
    const second = attemptRow(delivery, 2, T0 + 2000, {
      trigger: 'manual',
      status_code: 200,
      outcome: 'delivered',
      error: null,
      duration_ms: 15,
    });
    await insertAttempts(db, [first, second]);

    const found = await findDelivery(db, scopeOf(s), s.id, delivery.id);
    expect(found).toEqual({
      id: delivery.id,
      eventId: delivery.event_id,
      eventType: 'delivery.shortage',
      subscriptionId: s.id,
      status: 'delivered',
      attempts: 2,
      nextAttemptAt: null,
      deliveredAt: T0 + 2000,
      lastAttemptAt: T0 + 2000,
      lastStatus: 200,
      lastError: null,
      createdAt: T0,
      attemptLog: [
        {
          id: second.id,
          attempt: 2,
          trigger: 'manual',
          startedAt: T0 + 2000,
          durationMs: 15,
          statusCode: 200,
          outcome: 'delivered',
          error: null,
        },
        {
          id: first.id,
          attempt: 1,
          trigger: 'schedule',
          startedAt: T0 + 10,
          durationMs: 30,
          statusCode: 500,
          outcome: 'http_error',
          error: 'HTTP 500',
        },
      ],
    });
  });

  it('orders attempts that started at the same time by attempt number, newest first', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const delivery = await addDelivery(s, T0);
    await insertAttempts(db, [
      attemptRow(delivery, 1, T0),
      attemptRow(delivery, 3, T0),
      attemptRow(delivery, 2, T0),
    ]);
    const found = await findDelivery(db, scopeOf(s), s.id, delivery.id);
    expect(found?.attemptLog.map((a) => a.attempt)).toEqual([3, 2, 1]);
  });

  it('shows an empty attempt log for a delivery not attempted yet', async () => {
    const s = await newSubscription();
    const delivery = await addDelivery(s, T0);
    expect((await findDelivery(getDatabase().db, scopeOf(s), s.id, delivery.id))?.attemptLog).toEqual([]);
  });

  it('finds a delivery only in its own account, mode and subscription', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const sibling = await newSubscription(scopeOf(s));
    const stranger = await newSubscription();
    const delivery = await addDelivery(s, T0);
    expect(await findDelivery(db, scopeOf(stranger), s.id, delivery.id)).toBeUndefined();
    expect(await findDelivery(db, { ...scopeOf(s), mode: 'live' }, s.id, delivery.id)).toBeUndefined();
    expect(await findDelivery(db, scopeOf(s), sibling.id, delivery.id)).toBeUndefined();
    expect(await findDelivery(db, scopeOf(s), s.id, 'whd_unknown')).toBeUndefined();
    expect(await findDelivery(db, scopeOf(s), s.id, delivery.id)).toMatchObject({ id: delivery.id });
  });

  it('lists a subscription’s deliveries newest first, page by page after a cursor', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const oldest = await addDelivery(s, T0);
    const tiedA = await addDelivery(s, T0 + 1, { id: 'whd_tied_a' });
    const tiedB = await addDelivery(s, T0 + 1, { id: 'whd_tied_b' });
    const newest = await addDelivery(s, T0 + 2);
    const tenant = scopeOf(s);

    const first = await listDeliveries(db, tenant, s.id, { limit: 2 });
    expect(first.deliveries.map((d) => d.id)).toEqual([newest.id, tiedB.id]);
    expect(first.hasMore).toBe(true);
    const second = await listDeliveries(db, tenant, s.id, { limit: 2, startingAfter: tiedB.id });
    expect(second.deliveries.map((d) => d.id)).toEqual([tiedA.id, oldest.id]);
    expect(second.hasMore).toBe(false);
    const last = await listDeliveries(db, tenant, s.id, { limit: 2, startingAfter: oldest.id });
    expect(last).toEqual({ deliveries: [], hasMore: false });
    const all = await listDeliveries(db, tenant, s.id, { limit: 4 });
    expect(all.deliveries.map((d) => d.id)).toEqual([newest.id, tiedB.id, tiedA.id, oldest.id]);
    expect(all.hasMore).toBe(false);
  });

  it('lists only deliveries with the requested status', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const failed = await addDelivery(s, T0, { status: 'failed' });
    await addDelivery(s, T0 + 1, { status: 'delivered' });
    const failedLater = await addDelivery(s, T0 + 2, { status: 'failed' });
    await addDelivery(s, T0 + 3, { status: 'pending' });
    const page = await listDeliveries(db, scopeOf(s), s.id, { limit: 1, status: 'failed' });
    expect(page.deliveries.map((d) => d.id)).toEqual([failedLater.id]);
    expect(page.hasMore).toBe(true);
    const next = await listDeliveries(db, scopeOf(s), s.id, {
      limit: 1,
      status: 'failed',
      startingAfter: failedLater.id,
    });
    expect(next).toMatchObject({ deliveries: [{ id: failed.id, status: 'failed' }], hasMore: false });
  });

  it('lists nothing for another account, mode or subscription, or after an unknown cursor', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const sibling = await newSubscription(scopeOf(s));
    const stranger = await newSubscription();
    const mine = await addDelivery(s, T0);
    const siblings = await addDelivery(sibling, T0 + 1);
    const empty = { deliveries: [], hasMore: false };
    expect(await listDeliveries(db, scopeOf(stranger), s.id, { limit: 10 })).toEqual(empty);
    expect(await listDeliveries(db, { ...scopeOf(s), mode: 'live' }, s.id, { limit: 10 })).toEqual(empty);
    expect((await listDeliveries(db, scopeOf(s), s.id, { limit: 10 })).deliveries.map((d) => d.id)).toEqual([
      mine.id,
    ]);
    expect(await listDeliveries(db, scopeOf(s), s.id, { limit: 10, startingAfter: 'whd_unknown' })).toEqual(
      empty,
    );
    // A cursor from another subscription is unknown here.
    expect(await listDeliveries(db, scopeOf(s), s.id, { limit: 10, startingAfter: siblings.id })).toEqual(
      empty,
    );
  });

  it('gives each listed delivery its own attempts, at most the latest 25', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const busy = await addDelivery(s, T0);
    const calm = await addDelivery(s, T0 + 1);
    await insertAttempts(db, [
      ...Array.from({ length: 30 }, (_, i) => attemptRow(busy, i + 1, T0 + i)),
      attemptRow(calm, 1, T0 + 5),
    ]);
    const { deliveries } = await listDeliveries(db, scopeOf(s), s.id, { limit: 10 });
    const [calmRecord, busyRecord] = deliveries;
    expect(calmRecord?.attemptLog.map((a) => a.attempt)).toEqual([1]);
    expect(busyRecord?.attemptLog.map((a) => a.attempt)).toEqual(
      Array.from({ length: 25 }, (_, i) => 30 - i),
    );
    // findDelivery shows the same latest 25.
    expect((await findDelivery(db, scopeOf(s), s.id, busy.id))?.attemptLog).toEqual(busyRecord?.attemptLog);
  });
});
