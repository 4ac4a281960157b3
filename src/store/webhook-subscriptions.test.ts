import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { untilBlockedBy } from '../../test/lock-wait.js';
import type { Tenant } from '../core/caller.js';
import { manualClock } from '../lib/clock.js';
import { randomToken } from '../lib/ids.js';
import { createAccount } from './accounts.js';
import { sampleDeliveryRow, sampleSubscription } from './test-support/webhook-rows.js';
import {
  countSubscriptions,
  deleteSubscription,
  disableSubscription,
  findSubscription,
  insertSubscription,
  listSubscriptions,
  markSubscriptionFailing,
  markSubscriptionHealthy,
  subscriptionsFor,
  toSubscription,
  updateSubscription,
  type WebhookSubscription,
} from './webhook-subscriptions.js';

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const HOUR = 60 * 60 * 1000;

const subscription = (tenant: Tenant, overrides: Partial<WebhookSubscription> = {}) =>
  sampleSubscription(tenant, T0, { events: ['delivery.received', 'order.status_changed'], ...overrides });

describe('toSubscription', () => {
  it('turns a row into a subscription, with 0/1 as booleans and text numbers as numbers', () => {
    const row = {
      id: 'whk_1',
      account_id: 'acct_1',
      mode: 'live' as const,
      url: 'https://r.example.com',
      wholesaler: 'gehe',
      events: '["delivery.shortage"]',
      secret: 'whsec_new',
      previous_secret: 'whsec_old',
      // A raw pg client returns BIGINT as text; the repository must not pass it on as a string.
      previous_secret_expires_at: '1767603600000' as unknown as number,
      active: 0,
      disabled_reason: 'gone',
      disabled_at: '1767603600001' as unknown as number,
      failing_since: null,
      created_at: '1767603600002' as unknown as number,
      updated_at: 1_767_603_600_003,
    };
    expect(toSubscription(row)).toEqual({
      id: 'whk_1',
      accountId: 'acct_1',
      mode: 'live',
      url: 'https://r.example.com',
      wholesaler: 'gehe',
      events: ['delivery.shortage'],
      secret: 'whsec_new',
      previousSecret: 'whsec_old',
      previousSecretExpiresAt: 1_767_603_600_000,
      active: false,
      disabledReason: 'gone',
      disabledAt: 1_767_603_600_001,
      failingSince: null,
      createdAt: 1_767_603_600_002,
      updatedAt: 1_767_603_600_003,
    });
    expect(toSubscription({ ...row, active: 1 }).active).toBe(true);
  });
});

describeEachDialect('webhook subscriptions repository', (getDatabase) => {
  const clock = manualClock(T0);
  let wholesalerCounter = 0;

  async function newScope(mode: Tenant['mode'] = 'test'): Promise<Tenant> {
    const account = await createAccount(getDatabase().db, clock, { name: 'Apotheke' });
    return { accountId: account.id, mode };
  }

  /** A wholesaler id no other test subscribes to, for the cross-account `subscriptionsFor`. */
  const freshWholesaler = () => `wholesaler-${++wholesalerCounter}-${randomToken(6)}`;

  async function insert(tenant: Tenant, overrides: Partial<WebhookSubscription> = {}) {
    const s = subscription(tenant, overrides);
    await insertSubscription(getDatabase().db, s);
    return s;
  }

  it('stores a subscription and finds it again field for field', async () => {
    const { db } = getDatabase();
    const tenant = await newScope('live');
    const s = await insert(tenant, {
      previousSecret: 'whsec_previous',
      previousSecretExpiresAt: T0 + HOUR,
      failingSince: T0 - 5,
    });
    expect(await findSubscription(db, tenant, s.id)).toEqual(s);
  });

  it('refuses a subscription for an unknown account and a duplicate id', async () => {
    const { db } = getDatabase();
    await expect(
      insertSubscription(db, subscription({ accountId: 'acct_nobody', mode: 'test' })),
    ).rejects.toThrow();
    const tenant = await newScope();
    const s = await insert(tenant);
    await expect(insertSubscription(db, { ...s, url: 'https://other.example.com' })).rejects.toThrow();
    expect((await findSubscription(db, tenant, s.id))?.url).toBe(s.url);
  });

  it('keeps one account’s subscriptions from another, and test mode from live', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const other = await newScope();
    const s = await insert(tenant);
    expect(await findSubscription(db, other, s.id)).toBeUndefined();
    expect(await findSubscription(db, { ...tenant, mode: 'live' }, s.id)).toBeUndefined();
    expect(await findSubscription(db, tenant, 'whk_unknown')).toBeUndefined();
    expect(await listSubscriptions(db, other)).toEqual([]);
    expect(await countSubscriptions(db, other)).toBe(0);
    expect(await countSubscriptions(db, { ...tenant, mode: 'live' })).toBe(0);
  });

  it('lists a scope’s subscriptions oldest first, by id within one time, and counts them', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const newest = await insert(tenant, { id: 'whk_a_newest', createdAt: T0 + 2 });
    const laterId = await insert(tenant, { id: 'whk_z_first', createdAt: T0 + 1 });
    const earlierId = await insert(tenant, { id: 'whk_m_first', createdAt: T0 + 1 });
    await insert({ ...tenant, mode: 'live' }, { createdAt: T0 });
    expect(await listSubscriptions(db, tenant)).toEqual([earlierId, laterId, newest]);
    expect(await countSubscriptions(db, tenant)).toBe(3);
    expect(await countSubscriptions(db, { ...tenant, mode: 'live' })).toBe(1);
  });

  it('applies only the given changes and returns the updated subscription', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant);
    const updated = await updateSubscription(db, tenant, s.id, {
      url: 'https://new.example.com/hooks',
      events: ['wholesaler.status_changed'],
      secret: 'whsec_rotated',
      previousSecret: s.secret,
      previousSecretExpiresAt: T0 + HOUR,
      updatedAt: T0 + 10,
    });
    const expected: WebhookSubscription = {
      ...s,
      url: 'https://new.example.com/hooks',
      events: ['wholesaler.status_changed'],
      secret: 'whsec_rotated',
      previousSecret: s.secret,
      previousSecretExpiresAt: T0 + HOUR,
      updatedAt: T0 + 10,
    };
    expect(updated).toEqual(expected);
    expect(await findSubscription(db, tenant, s.id)).toEqual(expected);

    const disabled = await updateSubscription(db, tenant, s.id, {
      active: false,
      disabledReason: 'disabled by the user',
      disabledAt: T0 + 20,
      failingSince: T0 + 15,
      updatedAt: T0 + 20,
    });
    expect(disabled).toEqual({
      ...expected,
      active: false,
      disabledReason: 'disabled by the user',
      disabledAt: T0 + 20,
      failingSince: T0 + 15,
      updatedAt: T0 + 20,
    });
  });

  it('clears nullable fields when a change sets them to null', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant, {
      previousSecret: 'whsec_old',
      previousSecretExpiresAt: T0 + HOUR,
      active: false,
      disabledReason: 'receiver answered 410',
      disabledAt: T0,
      failingSince: T0 - HOUR,
    });
    const enabled = await updateSubscription(db, tenant, s.id, {
      active: true,
      previousSecret: null,
      previousSecretExpiresAt: null,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      updatedAt: T0 + 1,
    });
    expect(enabled).toEqual({
      ...s,
      active: true,
      previousSecret: null,
      previousSecretExpiresAt: null,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      updatedAt: T0 + 1,
    });
  });

  it('changes nothing and returns undefined for a subscription outside the scope', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const other = await newScope();
    const s = await insert(tenant);
    const change = { url: 'https://attacker.example.com', active: false, updatedAt: T0 + 1 };
    expect(await updateSubscription(db, other, s.id, change)).toBeUndefined();
    expect(await updateSubscription(db, { ...tenant, mode: 'live' }, s.id, change)).toBeUndefined();
    expect(await updateSubscription(db, tenant, 'whk_unknown', change)).toBeUndefined();
    expect(await findSubscription(db, tenant, s.id)).toEqual(s);
  });

  it('deletes a subscription in scope with its deliveries and attempts, once', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant);
    const keep = await insert(tenant);
    const eventId = `evt_${randomToken(22)}`;
    await db
      .insertInto('webhook_events')
      .values({
        id: eventId,
        account_id: tenant.accountId,
        mode: tenant.mode,
        type: 'delivery.received',
        wholesaler: 'phoenix',
        customer_id: null,
        payload: '{}',
        created_at: T0,
      })
      .execute();
    const delivery = (id: string, subscriptionId: string) => ({
      id,
      event_id: eventId,
      subscription_id: subscriptionId,
      account_id: tenant.accountId,
      mode: tenant.mode,
      status: 'failed' as const,
      attempts: 1,
      next_attempt_at: null,
      locked_by: null,
      locked_until: null,
      delivered_at: null,
      last_attempt_at: T0,
      last_status: 500,
      last_error: null,
      created_at: T0,
    });
    const gone = `whd_${randomToken(22)}`;
    const kept = `whd_${randomToken(22)}`;
    await db
      .insertInto('webhook_deliveries')
      .values([delivery(gone, s.id), delivery(kept, keep.id)])
      .execute();
    await db
      .insertInto('webhook_attempts')
      .values({
        id: `wha_${randomToken(22)}`,
        delivery_id: gone,
        subscription_id: s.id,
        attempt: 1,
        trigger: 'schedule',
        started_at: T0,
        duration_ms: 12,
        status_code: 500,
        outcome: 'http_error',
        error: null,
      })
      .execute();

    expect(await deleteSubscription(db, await newScope(), s.id)).toBe(false);
    expect(await deleteSubscription(db, { ...tenant, mode: 'live' }, s.id)).toBe(false);
    expect(await deleteSubscription(db, tenant, s.id)).toBe(true);
    expect(await deleteSubscription(db, tenant, s.id)).toBe(false);

    expect(await findSubscription(db, tenant, s.id)).toBeUndefined();
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', eventId)
      .execute();
    expect(deliveries.map((d) => d.id)).toEqual([kept]);
    const attempts = await db
      .selectFrom('webhook_attempts')
      .select('id')
      .where('delivery_id', '=', gone)
      .execute();
    expect(attempts).toEqual([]);
    expect(await findSubscription(db, tenant, keep.id)).toEqual(keep);
  });

  it('finds the active subscriptions of one account that want an event type for a wholesaler', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const other = await newScope();
    const wholesaler = freshWholesaler();
    const wanted = await insert(tenant, { id: 'whk_b', wholesaler, events: ['delivery.received'] });
    const alsoWanted = await insert(tenant, {
      id: 'whk_a',
      wholesaler,
      events: ['order.status_changed', 'delivery.received'],
    });
    await insert(tenant, { wholesaler, events: ['delivery.shortage'] });
    await insert(tenant, { wholesaler, events: ['delivery.received'], active: false });
    await insert(tenant, { wholesaler: freshWholesaler(), events: ['delivery.received'] });
    await insert({ ...tenant, mode: 'live' }, { wholesaler, events: ['delivery.received'] });
    await insert(other, { wholesaler, events: ['delivery.received'] });

    const found = await subscriptionsFor(db, {
      accountId: tenant.accountId,
      mode: 'test',
      wholesaler,
      type: 'delivery.received',
    });
    expect(found).toEqual([alsoWanted, wanted]);
  });

  it('finds the subscriptions of every account when no account is given', async () => {
    const { db } = getDatabase();
    const one = await newScope();
    const two = await newScope();
    const wholesaler = freshWholesaler();
    const a = await insert(one, { wholesaler, events: ['wholesaler.status_changed'] });
    const b = await insert(two, { wholesaler, events: ['wholesaler.status_changed'] });
    await insert({ ...two, mode: 'live' }, { wholesaler, events: ['wholesaler.status_changed'] });
    await insert(two, { wholesaler, events: ['wholesaler.status_changed'], active: false });

    const found = await subscriptionsFor(db, { mode: 'test', wholesaler, type: 'wholesaler.status_changed' });
    expect(found).toEqual([a, b].sort((x, y) => (x.id < y.id ? -1 : 1)));
    expect(
      await subscriptionsFor(db, { mode: 'test', wholesaler: freshWholesaler(), type: 'delivery.received' }),
    ).toEqual([]);
  });

  it('matches a subscription to every wholesaler (`*`) and to every event type (`*`)', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const wholesaler = freshWholesaler();
    const everyWholesaler = await insert(tenant, { wholesaler: '*', events: ['delivery.received'] });
    const everyEvent = await insert(tenant, { wholesaler, events: ['*'] });
    const everything = await insert(tenant, { wholesaler: '*', events: ['*'] });
    await insert(tenant, { wholesaler: freshWholesaler(), events: ['*'] });
    await insert({ ...tenant, mode: 'live' }, { wholesaler: '*', events: ['*'] });

    const sorted = (list: WebhookSubscription[]) => [...list].sort((x, y) => (x.id < y.id ? -1 : 1));
    const find = (type: 'delivery.received' | 'order.status_changed') =>
      subscriptionsFor(db, { accountId: tenant.accountId, mode: 'test', wholesaler, type });
    expect(await find('delivery.received')).toEqual(sorted([everyWholesaler, everyEvent, everything]));
    expect(await find('order.status_changed')).toEqual(sorted([everyEvent, everything]));
  });

  it('starts a failure run once and keeps its start over later failures', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant);
    expect(await markSubscriptionFailing(db, s.id, T0 + 100, HOUR, 'HTTP 500')).toBe(false);
    expect(await markSubscriptionFailing(db, s.id, T0 + 200, HOUR, 'HTTP 500')).toBe(false);
    expect(await findSubscription(db, tenant, s.id)).toEqual({ ...s, failingSince: T0 + 100 });
  });

  it('disables a subscription once its failure run has lasted the limit, and reports that only once', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant);
    await markSubscriptionFailing(db, s.id, T0, HOUR, 'HTTP 500');
    expect(await markSubscriptionFailing(db, s.id, T0 + HOUR - 1, HOUR, 'HTTP 502')).toBe(false);
    expect((await findSubscription(db, tenant, s.id))?.active).toBe(true);

    expect(await markSubscriptionFailing(db, s.id, T0 + HOUR, HOUR, 'HTTP 503')).toBe(true);
    expect(await findSubscription(db, tenant, s.id)).toEqual({
      ...s,
      active: false,
      disabledReason: 'HTTP 503',
      disabledAt: T0 + HOUR,
      failingSince: T0,
      updatedAt: T0 + HOUR,
    });
    expect(await markSubscriptionFailing(db, s.id, T0 + 2 * HOUR, HOUR, 'HTTP 504')).toBe(false);
    expect((await findSubscription(db, tenant, s.id))?.disabledReason).toBe('HTTP 503');
  });

  it('ends the failure run after a success, so the next failure starts a new one', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant);
    const bystander = await insert(tenant, { failingSince: T0 - 1 });
    await markSubscriptionFailing(db, s.id, T0, HOUR, 'HTTP 500');
    await markSubscriptionHealthy(db, s.id);
    expect(await findSubscription(db, tenant, s.id)).toEqual(s);
    expect((await findSubscription(db, tenant, bystander.id))?.failingSince).toBe(T0 - 1);

    expect(await markSubscriptionFailing(db, s.id, T0 + HOUR, HOUR, 'HTTP 500')).toBe(false);
    expect((await findSubscription(db, tenant, s.id))?.failingSince).toBe(T0 + HOUR);
  });

  it('leaves the update time alone when marking health or the start of a failure run', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant);
    await markSubscriptionFailing(db, s.id, T0 + 5, HOUR, 'HTTP 500');
    await markSubscriptionHealthy(db, s.id);
    expect((await findSubscription(db, tenant, s.id))?.updatedAt).toBe(s.updatedAt);
  });

  it('disables an active subscription at once and reports whether it was active', async () => {
    const { db } = getDatabase();
    const tenant = await newScope();
    const s = await insert(tenant);
    const bystander = await insert(tenant);
    expect(await disableSubscription(db, s.id, T0 + 7, 'receiver answered 410')).toBe(true);
    const disabled = {
      ...s,
      active: false,
      disabledReason: 'receiver answered 410',
      disabledAt: T0 + 7,
      updatedAt: T0 + 7,
    };
    expect(await findSubscription(db, tenant, s.id)).toEqual(disabled);
    expect(await disableSubscription(db, s.id, T0 + 8, 'again')).toBe(false);
    expect(await findSubscription(db, tenant, s.id)).toEqual(disabled);
    expect(await disableSubscription(db, 'whk_unknown', T0, 'x')).toBe(false);
    expect(await findSubscription(db, tenant, bystander.id)).toEqual(bystander);
  });
});

describeEachDialect(
  'subscriptions read for an event, and a delete meanwhile',
  (getDatabase) => {
    it('keeps the subscriptions it read until its transaction ends, so a delete cannot break its deliveries', async () => {
      const database = getDatabase();
      const clock = manualClock(T0);
      const account = await createAccount(database.db, clock, { name: 'Apotheke' });
      const tenant: Tenant = { accountId: account.id, mode: 'test' };
      const wholesaler = `wholesaler-${randomToken(6)}`;
      const s = sampleSubscription(tenant, T0, { wholesaler, events: ['delivery.received'] });
      await insertSubscription(database.db, s);
      const other = await database.openAnother();
      let deleted: Promise<boolean> | undefined;
      let settled = false;
      await database.db.transaction().execute(async (trx) => {
        const found = await subscriptionsFor(trx, {
          accountId: tenant.accountId,
          mode: 'test',
          wholesaler,
          type: 'delivery.received',
        });
        expect(found.map((f) => f.id)).toEqual([s.id]);
        // Another request deletes the subscription now; it must wait for this transaction.
        deleted = deleteSubscription(other.db, tenant, s.id);
        void deleted.finally(() => {
          settled = true;
        });
        await untilBlockedBy('postgres', database.db, trx, 'the delete waiting for this transaction');
        expect(settled).toBe(false);
        const eventId = `evt_${randomToken(22)}`;
        await trx
          .insertInto('webhook_events')
          .values({
            id: eventId,
            account_id: tenant.accountId,
            mode: 'test',
            type: 'delivery.received',
            wholesaler,
            customer_id: null,
            payload: '{}',
            created_at: T0,
          })
          .execute();
        await trx
          .insertInto('webhook_deliveries')
          .values(sampleDeliveryRow(eventId, s, T0))
          .execute();
      });
      expect(await deleted).toBe(true);
    });
  },
  { only: 'postgres' },
);
