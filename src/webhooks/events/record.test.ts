import { expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { manualClock } from '../../lib/clock.js';
import { newScope, sampleNotice, subscribe } from '../test-support/fixtures.js';
import { recordEvent, recordWholesalerStatusChange } from './record.js';

const URL = 'http://127.0.0.1:9/hooks';

describeEachDialect('recordEvent', (getDatabase) => {
  const clock = manualClock();

  async function deliveriesOf(eventId: string) {
    return getDatabase()
      .db.selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', eventId)
      .orderBy('subscription_id')
      .execute();
  }

  it('stores the event as the exact payload and fans it out to matching active subscriptions only', async () => {
    const { db } = getDatabase();
    const scope = await newScope(db);
    const wanted = await subscribe(db, scope, { url: URL });
    const alsoWanted = await subscribe(db, scope, { url: URL, events: ['delivery.received'] });
    await subscribe(db, scope, { url: URL, events: ['order.status_changed'] });
    await subscribe(db, scope, { url: URL, wholesaler: 'sanacorp' });
    const otherAccount = await newScope(db);
    await subscribe(db, otherAccount, { url: URL });
    await subscribe(db, { ...scope, mode: 'live' }, { url: URL });

    let woken = 0;
    const { event, deliveryIds } = await recordEvent(
      db,
      { ...scope, type: 'delivery.received', wholesaler: 'phoenix', customerId: '4711', data: sampleNotice },
      { clock, wake: () => woken++ },
    );
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Za-z]{22}$/),
      type: 'delivery.received',
      created_at: new Date(clock.now()).toISOString(),
      livemode: false,
      wholesaler: 'phoenix',
      customer_id: '4711',
      data: sampleNotice,
    });
    const deliveries = await deliveriesOf(event.id);
    expect(deliveries.map((d) => d.subscription_id).sort()).toEqual([wanted.id, alsoWanted.id].sort());
    expect(deliveryIds.sort()).toEqual(deliveries.map((d) => d.id).sort());
    for (const d of deliveries) {
      expect(d).toMatchObject({
        status: 'pending',
        attempts: 0,
        next_attempt_at: clock.now(),
        locked_by: null,
      });
    }
    const stored = await db
      .selectFrom('webhook_events')
      .selectAll()
      .where('id', '=', event.id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(stored.payload)).toEqual(event);
    expect(woken).toBe(1);
  });

  it('writes in the caller’s transaction: a rollback leaves neither event nor deliveries', async () => {
    const { db } = getDatabase();
    const scope = await newScope(db);
    await subscribe(db, scope, { url: URL });
    let eventId = '';
    await expect(
      db.transaction().execute(async (trx) => {
        ({
          event: { id: eventId },
        } = await recordEvent(
          trx,
          { ...scope, type: 'delivery.shortage', wholesaler: 'phoenix', data: sampleNotice },
          { clock },
        ));
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    expect(eventId).toMatch(/^evt_/);
    expect(await db.selectFrom('webhook_events').where('id', '=', eventId).select('id').execute()).toEqual(
      [],
    );
    expect(await deliveriesOf(eventId)).toEqual([]);
  });

  it('records the event even when nobody subscribed, and does not wake the worker', async () => {
    const { db } = getDatabase();
    const scope = await newScope(db, 'live');
    let woken = 0;
    const { event, deliveryIds } = await recordEvent(
      db,
      { ...scope, type: 'order.status_changed', wholesaler: 'phoenix', data: { order_id: 'GW-1' } },
      { clock, wake: () => woken++ },
    );
    expect(event).toMatchObject({ livemode: true, customer_id: null });
    expect(deliveryIds).toEqual([]);
    expect(woken).toBe(0);
  });

  it('queues a paused delivery for a paused or disabled subscription, without waking the worker', async () => {
    const { db } = getDatabase();
    const scope = await newScope(db);
    const disabled = await subscribe(db, scope, { url: URL });
    await db.updateTable('webhook_subscriptions').set({ active: 0 }).where('id', '=', disabled.id).execute();
    let woken = 0;
    const { deliveryIds, due } = await recordEvent(
      db,
      { ...scope, type: 'delivery.received', wholesaler: 'phoenix', data: sampleNotice },
      { clock, wake: () => woken++ },
    );
    expect(deliveryIds).toHaveLength(1);
    expect(due).toBe(0);
    expect(woken).toBe(0);
    const row = await db
      .selectFrom('webhook_deliveries')
      .select(['status', 'subscription_id'])
      .where('id', '=', deliveryIds[0]!)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'paused', subscription_id: disabled.id });
  });

  it('sends wholesaler.status_changed to every subscribed account of that mode, one event each', async () => {
    const { db } = getDatabase();
    const wholesaler = `w${Math.random().toString(36).slice(2, 10)}`;
    const [a, b, live] = [await newScope(db), await newScope(db), await newScope(db, 'live')];
    const subA = await subscribe(db, a, { url: URL, wholesaler });
    const subA2 = await subscribe(db, a, { url: URL, wholesaler, events: ['wholesaler.status_changed'] });
    const subB = await subscribe(db, b, { url: URL, wholesaler });
    await subscribe(db, b, { url: URL, wholesaler, events: ['delivery.received'] });
    await subscribe(db, live, { url: URL, wholesaler });

    const recorded = await recordWholesalerStatusChange(
      db,
      { wholesaler, mode: 'test', up: false, reason: 'connection refused' },
      { clock },
    );
    expect(recorded).toHaveLength(2);
    const byAccount = new Map<string, string[]>();
    for (const r of recorded) {
      expect(r.event).toMatchObject({
        type: 'wholesaler.status_changed',
        wholesaler,
        livemode: false,
        customer_id: null,
        data: {
          wholesaler,
          status: 'down',
          reason: 'connection refused',
          changed_at: new Date(clock.now()).toISOString(),
        },
      });
      const rows = await deliveriesOf(r.event.id);
      byAccount.set(rows[0]!.account_id, rows.map((d) => d.subscription_id).sort());
    }
    expect(byAccount.get(a.accountId)).toEqual([subA.id, subA2.id].sort());
    expect(byAccount.get(b.accountId)).toEqual([subB.id]);

    const ownerOnly = await recordWholesalerStatusChange(
      db,
      { wholesaler, mode: 'test', up: true, accountId: b.accountId },
      { clock },
    );
    expect(ownerOnly).toHaveLength(1);
    expect((await deliveriesOf(ownerOnly[0]!.event.id)).map((d) => d.subscription_id)).toEqual([subB.id]);
  });
  it('records a change of an account’s own wholesaler for that account without a subscription, a shared one only for subscribers', async () => {
    const { db } = getDatabase();
    const wholesaler = `w${Math.random().toString(36).slice(2, 10)}`;
    const owner = await newScope(db);
    const eventsOf = (accountId: string) =>
      db.selectFrom('webhook_events').select(['id', 'type']).where('account_id', '=', accountId).execute();

    const shared = await recordWholesalerStatusChange(db, { wholesaler, mode: 'test', up: false }, { clock });
    expect(shared).toEqual([]);
    expect(await eventsOf(owner.accountId)).toEqual([]);

    const own = await recordWholesalerStatusChange(
      db,
      { wholesaler, mode: 'test', up: false, accountId: owner.accountId },
      { clock },
    );
    expect(own).toHaveLength(1);
    expect(own[0]!.deliveryIds).toEqual([]);
    expect(await eventsOf(owner.accountId)).toEqual([
      { id: own[0]!.event.id, type: 'wholesaler.status_changed' },
    ]);

    // An account deleted meanwhile: nothing to record, and no broken foreign key.
    const gone = await recordWholesalerStatusChange(
      db,
      { wholesaler, mode: 'test', up: true, accountId: 'acct_deleted' },
      { clock },
    );
    expect(gone).toEqual([]);
  });
});
