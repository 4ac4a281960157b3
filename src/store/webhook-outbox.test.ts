import type { Kysely, Selectable } from 'kysely';
import { beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { untilBlockedBy } from '../../test/lock-wait.js';
import type { Tenant } from '../core/caller.js';
import { manualClock } from '../lib/clock.js';
import { newEventId, randomToken } from '../lib/ids.js';
import { createAccount } from './accounts.js';
import type { Tables } from './schema.js';
import { sampleDeliveryRow, sampleSubscription } from './test-support/webhook-rows.js';
import {
  claimDelivery,
  claimDueDeliveries,
  completeDelivered,
  completeDelivery,
  countPendingDeliveries,
  type DeliveryJob,
  EXPIRED_WHILE_PAUSED,
  insertAttempts,
  insertEventWithDeliveries,
  lockLiveDeliveries,
  pauseDeliveries,
  pauseIfInactive,
  pruneWebhookHistory,
  releaseDeliveries,
  resumeDeliveries,
} from './webhook-outbox.js';
import { deleteSubscription, insertSubscription, type WebhookSubscription } from './webhook-subscriptions.js';
import type { WebhookDeliveriesTable, WebhookEventsTable } from './webhook-tables.js';

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const LEASE = 30_000;
const HOUR = 60 * 60 * 1000;

type DeliveryRow = Selectable<WebhookDeliveriesTable>;

describeEachDialect('webhook outbox', (getDatabase, dialect) => {
  const clock = manualClock(T0);

  // The claims take whatever is due in the whole table, so every test starts with an empty outbox.
  beforeEach(async () => {
    await getDatabase().db.deleteFrom('webhook_events').execute();
  });

  async function newSubscription(overrides: Partial<WebhookSubscription> = {}): Promise<WebhookSubscription> {
    const account = await createAccount(getDatabase().db, clock, { name: 'Apotheke' });
    const s = sampleSubscription({ accountId: account.id, mode: 'test' }, T0, {
      events: ['delivery.received'],
      ...overrides,
    });
    await insertSubscription(getDatabase().db, s);
    return s;
  }

  function eventRow(scope: Tenant, createdAt = T0): Selectable<WebhookEventsTable> {
    const id = newEventId();
    return {
      id,
      account_id: scope.accountId,
      mode: scope.mode,
      type: 'delivery.received',
      wholesaler: 'phoenix',
      customer_id: 'PLA\\apotheke1',
      payload: JSON.stringify({ id, type: 'delivery.received', data: { n: randomToken(6) } }),
      created_at: createdAt,
    };
  }

  const deliveryRow = (eventId: string, s: WebhookSubscription, overrides: Partial<DeliveryRow> = {}) =>
    sampleDeliveryRow(eventId, s, T0, overrides);

  /** One event per delivery, each with the given overrides; returns the delivery rows. */
  async function seed(s: WebhookSubscription, ...rows: Partial<DeliveryRow>[]): Promise<DeliveryRow[]> {
    const out: DeliveryRow[] = [];
    for (const overrides of rows) {
      const event = eventRow(s, overrides.created_at ?? T0);
      const delivery = deliveryRow(event.id, s, overrides);
      await insertEventWithDeliveries(getDatabase().db, event, [delivery]);
      out.push(delivery);
    }
    return out;
  }

  const readDelivery = (id: string, db: Kysely<Tables> = getDatabase().db) =>
    db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();

  const claim = (token: string, now: number, limit = 10, perSubscription?: number) =>
    claimDueDeliveries(getDatabase().db, dialect, { token, now, leaseMs: LEASE, limit, perSubscription });

  const ids = (jobs: { id: string }[]) => jobs.map((j) => j.id).sort();
  const sorted = (list: string[]) => [...list].sort();

  it('stores an event with one delivery per row, and an event alone without any', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const other = await newSubscription({ accountId: s.accountId });
    const event = eventRow(s);
    const deliveries = [deliveryRow(event.id, s), deliveryRow(event.id, other)];
    await insertEventWithDeliveries(db, event, deliveries);
    const lonely = eventRow(s);
    await insertEventWithDeliveries(db, lonely, []);

    expect(await db.selectFrom('webhook_events').selectAll().where('id', '=', event.id).execute()).toEqual([
      event,
    ]);
    const stored = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', event.id)
      .orderBy('id')
      .execute();
    expect(stored).toEqual([...deliveries].sort((a, b) => (a.id < b.id ? -1 : 1)));
    expect(
      await db.selectFrom('webhook_events').select('id').where('id', '=', lonely.id).execute(),
    ).toHaveLength(1);
    expect(
      await db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', lonely.id).execute(),
    ).toEqual([]);
  });

  it('stores nothing when the caller’s transaction rolls back', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const event = eventRow(s);
    await expect(
      db.transaction().execute(async (trx) => {
        await insertEventWithDeliveries(trx, event, [deliveryRow(event.id, s)]);
        throw new Error('state change failed');
      }),
    ).rejects.toThrow('state change failed');
    expect(await db.selectFrom('webhook_events').select('id').where('id', '=', event.id).execute()).toEqual(
      [],
    );
    expect(await countPendingDeliveries(db)).toBe(0);
  });

  it('leases a due delivery to the token, counts the attempt and returns what the attempt needs', async () => {
    const s = await newSubscription({
      previousSecret: 'whsec_previous',
      previousSecretExpiresAt: T0 + 60_000,
      failingSince: T0 - 1000,
    });
    const event = eventRow(s, T0 - 5);
    const delivery = deliveryRow(event.id, s, { attempts: 2, next_attempt_at: T0 - 1 });
    await insertEventWithDeliveries(getDatabase().db, event, [delivery]);

    const jobs = await claim('worker-a', T0);
    const expected: DeliveryJob = {
      id: delivery.id,
      eventId: event.id,
      eventType: 'delivery.received',
      eventCreatedAt: T0 - 5,
      subscriptionId: s.id,
      accountId: s.accountId,
      mode: 'test',
      status: 'pending',
      attempts: 3,
      payload: event.payload,
      url: s.url,
      secret: s.secret,
      previousSecret: 'whsec_previous',
      previousSecretExpiresAt: T0 + 60_000,
      subscriptionFailingSince: T0 - 1000,
      token: 'worker-a',
    };
    expect(jobs).toEqual([expected]);
    expect(await readDelivery(delivery.id)).toMatchObject({
      status: 'pending',
      attempts: 3,
      locked_by: 'worker-a',
      locked_until: T0 + LEASE,
    });
  });

  it('claims nothing when nothing is due', async () => {
    const s = await newSubscription();
    await seed(s, { next_attempt_at: T0 + 1 });
    expect(await claim('worker-a', T0)).toEqual([]);
  });

  it('claims every due delivery and none that is not due yet', async () => {
    const s = await newSubscription();
    const [early, atNow, future] = await seed(
      s,
      { next_attempt_at: T0 - 300 },
      { next_attempt_at: T0 },
      { next_attempt_at: T0 + 1 },
    );
    expect(ids(await claim('worker-a', T0, 10))).toEqual(sorted([early!.id, atNow!.id]));
    expect((await readDelivery(future!.id))?.locked_by).toBeNull();
  });

  // On PostgreSQL `id IN (SELECT … LIMIT n FOR UPDATE SKIP LOCKED)` may be planned as a nested-loop
  // semi join that rescans the subquery per outer row, each rescan locking the next rows, so one claim
  // leased every due delivery; the claim now uses `id = any(array(…))`, evaluated once.
  it('claims the earliest due deliveries first, no more than the limit', async () => {
    const s = await newSubscription();
    const [first, second, third, fourth] = await seed(
      s,
      { next_attempt_at: T0 - 300 },
      { next_attempt_at: T0 - 100 },
      { next_attempt_at: T0 - 200 },
      { next_attempt_at: T0 },
    );
    expect(ids(await claim('worker-a', T0, 2))).toEqual(sorted([first!.id, third!.id]));
    expect(ids(await claim('worker-b', T0, 10))).toEqual(sorted([second!.id, fourth!.id]));
  });

  it('claims no more than the limit under a per-subscription cap', async () => {
    const subscriptions = [await newSubscription(), await newSubscription(), await newSubscription()];
    for (const s of subscriptions) await seed(s, {}, {}, {});
    expect(await claim('worker-a', T0, 2, 5)).toHaveLength(2);
    expect(await claim('worker-b', T0, 4, 5)).toHaveLength(4);
  });

  it('claims only pending deliveries, not paused, delivered or failed ones', async () => {
    const s = await newSubscription();
    const [pending] = await seed(
      s,
      { status: 'pending' },
      { status: 'paused' },
      { status: 'delivered', delivered_at: T0 },
      { status: 'failed' },
    );
    expect(ids(await claim('worker-a', T0 + 1))).toEqual([pending!.id]);
  });

  it('leaves a leased delivery alone until its lease has run out, then lets another worker take it over', async () => {
    const s = await newSubscription();
    const [delivery] = await seed(s, {});
    const id = delivery!.id;
    expect(ids(await claim('worker-a', T0))).toEqual([id]);
    expect(await claim('worker-b', T0 + 1)).toEqual([]);
    expect(await claim('worker-b', T0 + LEASE)).toEqual([]);

    const takenOver = await claim('worker-b', T0 + LEASE + 1);
    expect(takenOver).toMatchObject([{ id, attempts: 2, token: 'worker-b' }]);
    expect(await readDelivery(id)).toMatchObject({ locked_by: 'worker-b', locked_until: T0 + 2 * LEASE + 1 });
  });

  if (dialect === 'postgres') {
    for (const perSubscription of [undefined, 5]) {
      it(`skips rows another transaction has locked instead of waiting for it${perSubscription === undefined ? '' : ' (with a cap)'}`, async () => {
        const another = await getDatabase().openAnother();
        const s = await newSubscription();
        const [locked, free] = await seed(s, { next_attempt_at: T0 - 2 }, { next_attempt_at: T0 - 1 });
        let finish = () => {};
        const holding = new Promise<void>((resolve) => {
          finish = resolve;
        });
        let lockTaken = () => {};
        const lockIsTaken = new Promise<void>((resolve) => {
          lockTaken = resolve;
        });
        const other = another.db.transaction().execute(async (trx) => {
          await trx
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('id', '=', locked!.id)
            .forUpdate()
            .execute();
          lockTaken();
          await holding;
        });
        try {
          await lockIsTaken;
          const outcome = await Promise.race([
            claim('worker-a', T0, 10, perSubscription),
            new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 3000)),
          ]);
          expect(outcome === 'blocked' ? outcome : ids(outcome)).toEqual([free!.id]);
        } finally {
          finish();
          await other;
        }
        expect(ids(await claim('worker-b', T0, 10, perSubscription))).toEqual([locked!.id]);
      });
    }
  }

  it('gives concurrent claims disjoint deliveries', async () => {
    const database = getDatabase();
    const another = await database.openAnother();
    const s = await newSubscription();
    const rows = await seed(s, ...Array.from({ length: 60 }, (_, i) => ({ next_attempt_at: T0 - i })));
    const handles = [database.db, another.db];
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        claimDueDeliveries(handles[i % 2]!, dialect, {
          token: `worker-${i}`,
          now: T0,
          leaseMs: LEASE,
          limit: 10,
        }),
      ),
    );
    const claimed = claims.flat();
    expect(new Set(claimed.map((j) => j.id)).size).toBe(claimed.length);
    // Every delivery is claimed exactly once, by one of those claims or by a claim afterwards.
    const rest = await claim('worker-last', T0, 100);
    expect(sorted([...claimed, ...rest].map((j) => j.id))).toEqual(sorted(rows.map((r) => r.id)));
    // Each job's token is the one that holds its lease, and every attempt was counted once.
    for (const job of [...claimed, ...rest]) {
      expect(await readDelivery(job.id)).toMatchObject({ locked_by: job.token, attempts: 1 });
    }
  });

  it('claims at most the cap per subscription, earliest first, and the others as usual', async () => {
    const busy = await newSubscription();
    const quiet = await newSubscription();
    const busyRows = await seed(busy, ...[5, 4, 3, 2, 1].map((n) => ({ next_attempt_at: T0 - n * 10 })));
    const quietRows = await seed(quiet, { next_attempt_at: T0 - 1 });
    const jobs = await claim('worker-a', T0, 10, 2);
    expect(ids(jobs)).toEqual(sorted([busyRows[0]!.id, busyRows[1]!.id, quietRows[0]!.id]));
  });

  it('counts leases held by other workers and manual attempts against the cap', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const rows = await seed(s, ...[4, 3, 2, 1].map((n) => ({ next_attempt_at: T0 - n })));
    // A manual attempt holds one, so with a cap of 2 only one more goes out.
    expect(
      await claimDelivery(db, { id: rows[3]!.id, token: 'manual', now: T0, leaseMs: LEASE }),
    ).toBeDefined();
    expect(ids(await claim('worker-a', T0, 10, 2))).toEqual([rows[0]!.id]);
    expect(await claim('worker-b', T0 + 1, 10, 2)).toEqual([]);
    // Once one lease is given back, one more slot is free.
    await releaseDeliveries(db, 'worker-a', [rows[0]!.id]);
    expect(ids(await claim('worker-b', T0 + 2, 10, 2))).toEqual([rows[0]!.id]);
    // When the leases run out, they no longer count.
    expect(ids(await claim('worker-c', T0 + 2 + LEASE + 1, 10, 2))).toHaveLength(2);
  });

  it('leases one delivery for a manual attempt whatever its status or due time', async () => {
    const { db } = getDatabase();
    const s = await newSubscription({ failingSince: T0 - 1 });
    const [failed, notDue] = await seed(
      s,
      { status: 'failed', attempts: 8, next_attempt_at: null, last_status: 500 },
      { next_attempt_at: T0 + 60_000 },
    );
    const job = await claimDelivery(db, { id: failed!.id, token: 'manual-1', now: T0, leaseMs: LEASE });
    expect(job).toMatchObject({
      id: failed!.id,
      status: 'failed',
      attempts: 9,
      token: 'manual-1',
      subscriptionFailingSince: T0 - 1,
    });
    expect(await readDelivery(failed!.id)).toMatchObject({
      status: 'failed',
      locked_by: 'manual-1',
      locked_until: T0 + LEASE,
    });
    expect(
      await claimDelivery(db, { id: notDue!.id, token: 'manual-2', now: T0, leaseMs: LEASE }),
    ).toMatchObject({
      id: notDue!.id,
      attempts: 1,
    });
  });

  it('refuses a manual attempt while the delivery is leased, and for an unknown delivery', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const [delivery] = await seed(s, {});
    const id = delivery!.id;
    await claim('worker-a', T0);
    expect(await claimDelivery(db, { id, token: 'manual', now: T0 + LEASE, leaseMs: LEASE })).toBeUndefined();
    expect(await readDelivery(id)).toMatchObject({ locked_by: 'worker-a', attempts: 1 });
    expect(
      await claimDelivery(db, { id, token: 'manual', now: T0 + LEASE + 1, leaseMs: LEASE }),
    ).toMatchObject({
      id,
      attempts: 2,
      token: 'manual',
    });
    expect(
      await claimDelivery(db, { id: 'whd_unknown', token: 'manual', now: T0, leaseMs: LEASE }),
    ).toBeUndefined();
  });

  it('writes an attempt’s result and ends the lease while the token holds it', async () => {
    const s = await newSubscription();
    const [delivery] = await seed(s, {});
    const [job] = await claim('worker-a', T0);
    const ok = await completeDelivery(getDatabase().db, job!, {
      status: 'pending',
      nextAttemptAt: T0 + 60_000,
      lastAttemptAt: T0 + 10,
      lastStatus: 503,
      lastError: 'HTTP 503',
    });
    expect(ok).toBe(true);
    expect(await readDelivery(delivery!.id)).toEqual({
      ...delivery,
      attempts: 1,
      next_attempt_at: T0 + 60_000,
      last_attempt_at: T0 + 10,
      last_status: 503,
      last_error: 'HTTP 503',
    });
    // Not due before its next attempt time, due after.
    expect(await claim('worker-b', T0 + 59_999)).toEqual([]);
    expect(ids(await claim('worker-b', T0 + 60_000))).toEqual([delivery!.id]);
  });

  it('records the delivery time only when given', async () => {
    const s = await newSubscription();
    const [delivery] = await seed(s, {});
    const [job] = await claim('worker-a', T0);
    await completeDelivery(getDatabase().db, job!, {
      status: 'delivered',
      nextAttemptAt: null,
      deliveredAt: T0 + 20,
      lastAttemptAt: T0 + 20,
      lastStatus: 200,
      lastError: null,
    });
    expect(await readDelivery(delivery!.id)).toMatchObject({ status: 'delivered', delivered_at: T0 + 20 });
    const again = await claimDelivery(getDatabase().db, {
      id: delivery!.id,
      token: 'manual',
      now: T0 + 30,
      leaseMs: LEASE,
    });
    await completeDelivery(getDatabase().db, again!, {
      status: 'delivered',
      nextAttemptAt: null,
      lastAttemptAt: T0 + 40,
      lastStatus: 204,
      lastError: null,
    });
    expect(await readDelivery(delivery!.id)).toMatchObject({ delivered_at: T0 + 20, last_status: 204 });
  });

  it('changes nothing for a worker whose lease was taken over', async () => {
    const s = await newSubscription();
    const [delivery] = await seed(s, {});
    const [stale] = await claim('worker-a', T0);
    await claim('worker-b', T0 + LEASE + 1);
    const before = await readDelivery(delivery!.id);
    const update = {
      status: 'failed' as const,
      nextAttemptAt: null,
      lastAttemptAt: T0,
      lastStatus: 500,
      lastError: 'x',
    };
    expect(await completeDelivery(getDatabase().db, stale!, update)).toBe(false);
    expect(await completeDelivery(getDatabase().db, { id: 'whd_unknown', token: 'worker-a' }, update)).toBe(
      false,
    );
    expect(await readDelivery(delivery!.id)).toEqual(before);
  });

  it('marks several attempts delivered at once and returns those whose lease was still held', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const [a, b, lost] = await seed(s, {}, {}, {});
    await claim('worker-a', T0);
    // Another worker took `lost` over after its lease ran out.
    await db
      .updateTable('webhook_deliveries')
      .set({ locked_by: 'worker-b' })
      .where('id', '=', lost!.id)
      .execute();
    const held = await completeDelivered(db, {
      ids: [a!.id, b!.id, lost!.id, 'whd_unknown'],
      token: 'worker-a',
      at: T0 + 50,
      status: 200,
    });
    expect(held).toEqual(new Set([a!.id, b!.id]));
    for (const row of [a!, b!]) {
      expect(await readDelivery(row.id)).toEqual({
        ...row,
        status: 'delivered',
        attempts: 1,
        next_attempt_at: null,
        delivered_at: T0 + 50,
        last_attempt_at: T0 + 50,
        last_status: 200,
        last_error: null,
      });
    }
    expect(await readDelivery(lost!.id)).toMatchObject({ status: 'pending', locked_by: 'worker-b' });
    expect(await completeDelivered(db, { ids: [], token: 'worker-a', at: T0, status: 200 })).toEqual(
      new Set(),
    );
  });

  it('parks the pending deliveries of one subscription and makes them due again on resume', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const other = await newSubscription();
    const [pending, delivered, failed] = await seed(
      s,
      { next_attempt_at: T0 - 1000 },
      { status: 'delivered', next_attempt_at: null, delivered_at: T0 },
      { status: 'failed', next_attempt_at: null },
    );
    const [othersPending] = await seed(other, {});

    await pauseDeliveries(db, s.id);
    expect((await readDelivery(pending!.id))?.status).toBe('paused');
    expect((await readDelivery(delivered!.id))?.status).toBe('delivered');
    expect((await readDelivery(failed!.id))?.status).toBe('failed');
    expect((await readDelivery(othersPending!.id))?.status).toBe('pending');
    expect(ids(await claim('worker-a', T0))).toEqual([othersPending!.id]);

    await resumeDeliveries(db, s.id, T0);
    expect((await readDelivery(pending!.id))?.status).toBe('pending');
    expect((await readDelivery(delivered!.id))?.status).toBe('delivered');
    expect((await readDelivery(failed!.id))?.status).toBe('failed');
    // Overdue while paused: due at once.
    expect(ids(await claim('worker-a', T0))).toEqual([pending!.id]);
  });

  it('resumes only the subscription it names', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const other = await newSubscription();
    const [mine] = await seed(s, {});
    const [theirs] = await seed(other, {});
    await pauseDeliveries(db, s.id);
    await pauseDeliveries(db, other.id);
    await resumeDeliveries(db, s.id, T0);
    expect((await readDelivery(mine!.id))?.status).toBe('pending');
    expect((await readDelivery(theirs!.id))?.status).toBe('paused');
  });

  it('resuming makes paused and backed-off deliveries due now, keeps earlier due times and leaves finished ones alone', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const other = await newSubscription();
    const [paused, backedOff, overdue, delivered, failed] = await seed(
      s,
      { status: 'paused', next_attempt_at: T0 + 2 * HOUR, attempts: 4 },
      { status: 'pending', next_attempt_at: T0 + HOUR, attempts: 3 },
      { status: 'pending', next_attempt_at: T0 - 1000, attempts: 2 },
      { status: 'delivered', next_attempt_at: null, delivered_at: T0 },
      { status: 'failed', next_attempt_at: null },
    );
    const [othersBackedOff] = await seed(other, { next_attempt_at: T0 + HOUR });
    expect(ids(await claim('worker-a', T0))).toEqual([overdue!.id]);
    await releaseDeliveries(db, 'worker-a', [overdue!.id]);

    expect(await resumeDeliveries(db, s.id, T0)).toBe(2);
    expect(await readDelivery(paused!.id)).toMatchObject({
      status: 'pending',
      next_attempt_at: T0,
      attempts: 4,
    });
    expect(await readDelivery(backedOff!.id)).toMatchObject({ status: 'pending', next_attempt_at: T0 });
    expect(await readDelivery(overdue!.id)).toMatchObject({ status: 'pending', next_attempt_at: T0 - 1000 });
    expect(await readDelivery(delivered!.id)).toMatchObject({ status: 'delivered', next_attempt_at: null });
    expect(await readDelivery(failed!.id)).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(await readDelivery(othersBackedOff!.id)).toMatchObject({ next_attempt_at: T0 + HOUR });
    expect(ids(await claim('worker-b', T0))).toEqual(sorted([paused!.id, backedOff!.id, overdue!.id]));
  });

  it('parks a rescheduled delivery whose subscription was paused during its attempt', async () => {
    const { db } = getDatabase();
    const active = await newSubscription();
    const inactive = await newSubscription({ active: false });
    const [stays] = await seed(active, {});
    const [parks, finished] = await seed(inactive, {}, { status: 'failed', next_attempt_at: null });
    await pauseIfInactive(db, [stays!.id, parks!.id, finished!.id]);
    await pauseIfInactive(db, []);
    expect((await readDelivery(stays!.id))?.status).toBe('pending');
    expect((await readDelivery(parks!.id))?.status).toBe('paused');
    expect((await readDelivery(finished!.id))?.status).toBe('failed');
  });

  it('tells which deliveries still exist, and holds a subscription’s deletion until the transaction ends', async () => {
    const { db } = getDatabase();
    const kept = await newSubscription();
    const gone = await newSubscription();
    const [keptDelivery] = await seed(kept, {});
    const [goneDelivery] = await seed(gone, {});
    expect(await deleteSubscription(db, gone, gone.id)).toBe(true);
    let deleting: Promise<boolean> | undefined;
    let deleted = false;
    await db.transaction().execute(async (trx) => {
      const live = await lockLiveDeliveries(trx, dialect, [
        { id: keptDelivery!.id, subscriptionId: kept.id },
        { id: goneDelivery!.id, subscriptionId: gone.id },
      ]);
      expect([...live]).toEqual([keptDelivery!.id]);
      // Another connection deletes the subscription meanwhile: it waits for this transaction.
      deleting = deleteSubscription(db, kept, kept.id);
      void deleting.then(() => {
        deleted = true;
      });
      await untilBlockedBy(dialect, db, trx, 'the delete waiting for this transaction');
      expect(deleted).toBe(false);
      await insertAttempts(trx, [
        {
          id: `wha_${randomToken(22)}`,
          delivery_id: keptDelivery!.id,
          subscription_id: kept.id,
          attempt: 1,
          trigger: 'schedule',
          started_at: T0,
          duration_ms: 5,
          status_code: 200,
          outcome: 'success',
          error: null,
        },
      ]);
    });
    // The transaction committed first (no foreign key error); the deletion then went through.
    expect(await deleting).toBe(true);
    expect(await readDelivery(keptDelivery!.id)).toBeUndefined();
    expect(await lockLiveDeliveries(db, dialect, [])).toEqual(new Set());
  });

  it('gives back only the token’s own leases, which are then due again at once', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const [mine, also, theirs] = await seed(s, {}, {}, {});
    await claimDelivery(db, { id: mine!.id, token: 'worker-a', now: T0, leaseMs: LEASE });
    await claimDelivery(db, { id: also!.id, token: 'worker-a', now: T0, leaseMs: LEASE });
    await claimDelivery(db, { id: theirs!.id, token: 'worker-b', now: T0, leaseMs: LEASE });

    await releaseDeliveries(db, 'worker-a', [mine!.id, theirs!.id]);
    expect(await readDelivery(mine!.id)).toMatchObject({
      status: 'pending',
      locked_by: null,
      locked_until: null,
    });
    expect(await readDelivery(also!.id)).toMatchObject({ locked_by: 'worker-a' });
    expect(await readDelivery(theirs!.id)).toMatchObject({ locked_by: 'worker-b', locked_until: T0 + LEASE });
    expect(ids(await claim('worker-c', T0 + 1))).toEqual([mine!.id]);

    await releaseDeliveries(db, 'worker-a', []);
    expect(await readDelivery(also!.id)).toMatchObject({ locked_by: 'worker-a' });
  });

  it('stores attempts, and nothing for an empty list', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const [delivery] = await seed(s, {});
    const attempt = (n: number) => ({
      id: `wha_${randomToken(22)}`,
      delivery_id: delivery!.id,
      subscription_id: s.id,
      attempt: n,
      trigger: 'schedule',
      started_at: T0 + n,
      duration_ms: 40 + n,
      status_code: n === 1 ? null : 200,
      outcome: n === 1 ? 'timeout' : 'delivered',
      error: n === 1 ? 'timed out after 10 s' : null,
    });
    const attempts = [attempt(1), attempt(2)];
    await insertAttempts(db, attempts);
    await insertAttempts(db, []);
    const stored = await db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', '=', delivery!.id)
      .orderBy('attempt')
      .execute();
    expect(stored).toEqual(attempts);
    await expect(insertAttempts(db, [{ ...attempt(3), delivery_id: 'whd_unknown' }])).rejects.toThrow();
  });

  it('counts pending deliveries, leased ones included, and nothing else', async () => {
    const { db } = getDatabase();
    expect(await countPendingDeliveries(db)).toBe(0);
    const s = await newSubscription();
    await seed(
      s,
      {},
      { next_attempt_at: T0 + HOUR },
      { locked_by: 'worker-a', locked_until: T0 + LEASE },
      { status: 'paused' },
      { status: 'delivered' },
      { status: 'failed' },
    );
    expect(await countPendingDeliveries(db)).toBe(3);
  });

  it('prunes old events with nothing left to deliver, with their deliveries and attempts; paused deliveries that old are given up', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const cutoff = T0;
    const [done, , pending, paused, recent] = await seed(
      s,
      { created_at: cutoff - 10, status: 'delivered' },
      { created_at: cutoff - 10, status: 'failed' },
      { created_at: cutoff - 10, status: 'pending' },
      { created_at: cutoff - 10, status: 'paused' },
      { created_at: cutoff, status: 'delivered' },
    );
    const noDeliveries = eventRow(s, cutoff - 1);
    await insertEventWithDeliveries(db, noDeliveries, []);
    await insertAttempts(db, [
      {
        id: `wha_${randomToken(22)}`,
        delivery_id: done!.id,
        subscription_id: s.id,
        attempt: 1,
        trigger: 'schedule',
        started_at: cutoff - 10,
        duration_ms: 5,
        status_code: 200,
        outcome: 'delivered',
        error: null,
      },
    ]);

    expect(await pruneWebhookHistory(db, cutoff)).toBe(4);
    const events = await db.selectFrom('webhook_events').select('id').execute();
    expect(sorted(events.map((e) => e.id))).toEqual(sorted([pending!.event_id, recent!.event_id]));
    expect(events.map((e) => e.id)).not.toContain(paused!.event_id);
    const deliveries = await db.selectFrom('webhook_deliveries').select('id').execute();
    expect(sorted(deliveries.map((d) => d.id))).toEqual(sorted([pending!.id, recent!.id]));
    expect(
      await db.selectFrom('webhook_attempts').select('id').where('delivery_id', '=', done!.id).execute(),
    ).toEqual([]);
    expect(await pruneWebhookHistory(db, cutoff)).toBe(0);
  });

  it('gives up a paused delivery older than the cutoff, keeping it in the log while its event is still needed', async () => {
    const { db } = getDatabase();
    const s = await newSubscription({ active: false });
    const other = await newSubscription({ accountId: s.accountId });
    const event = eventRow(s, T0 - 100);
    const paused = deliveryRow(event.id, s, { status: 'paused', created_at: T0 - 100 });
    const [recentPaused] = await seed(s, { status: 'paused', created_at: T0 });
    await insertEventWithDeliveries(db, event, [
      paused,
      deliveryRow(event.id, other, { status: 'pending', created_at: T0 - 100 }),
    ]);
    expect(await pruneWebhookHistory(db, T0)).toBe(0);
    expect(await readDelivery(paused.id)).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
      last_error: EXPIRED_WHILE_PAUSED,
    });
    expect((await readDelivery(recentPaused!.id))?.status).toBe('paused');
  });

  it('keeps an event while any of its deliveries is still waiting', async () => {
    const { db } = getDatabase();
    const s = await newSubscription();
    const other = await newSubscription({ accountId: s.accountId });
    const event = eventRow(s, T0 - 100);
    await insertEventWithDeliveries(db, event, [
      deliveryRow(event.id, s, { status: 'delivered' }),
      deliveryRow(event.id, other, { status: 'pending' }),
    ]);
    expect(await pruneWebhookHistory(db, T0)).toBe(0);
    expect(
      await db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', event.id).execute(),
    ).toHaveLength(2);
  });
});
