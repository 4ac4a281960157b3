import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import type { KeyMode } from '../core/key-mode.js';
import type { Dialect } from './database.js';
import type { Tables } from './schema.js';
import type {
  DeliveryStatus,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEventsTable,
} from './webhook-tables.js';

/** One delivery, claimed under a lease, with what an attempt needs. */
export interface DeliveryJob {
  id: string;
  eventId: string;
  eventType: string;
  eventCreatedAt: number;
  subscriptionId: string;
  accountId: string;
  mode: KeyMode;
  /** Status before this attempt. */
  status: DeliveryStatus;
  /** Including the attempt about to be made. */
  attempts: number;
  payload: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** The subscription's open failure run, if any, when the delivery was claimed. */
  subscriptionFailingSince: number | null;
  /** The claim token; the attempt's result is written only while it still holds the lease. */
  token: string;
}

export async function insertEventWithDeliveries(
  db: Kysely<Tables>,
  event: Selectable<WebhookEventsTable>,
  deliveries: Selectable<WebhookDeliveriesTable>[],
): Promise<void> {
  await db.insertInto('webhook_events').values(event).execute();
  if (deliveries.length > 0) await db.insertInto('webhook_deliveries').values(deliveries).execute();
}

export interface ClaimInput {
  token: string;
  now: number;
  leaseMs: number;
  limit: number;
  /**
   * At most this many attempts in flight per subscription (leases held by any worker count), so one
   * slow receiver cannot take every slot. Unset: no cap.
   */
  perSubscription?: number;
}

/**
 * Leases up to `limit` due deliveries to `token` and counts the attempt (deliveries of disabled
 * subscriptions are `paused`, not `pending`, so the claim needs no join); with `perSubscription`, at most
 * that many in flight per subscription.
 * PostgreSQL: `FOR UPDATE SKIP LOCKED`, so concurrent workers take disjoint rows; SQLite: one statement,
 * which SQLite runs as a single write transaction. A lease that expired (a crashed worker) is taken over.
 */
export async function claimDueDeliveries(
  db: Kysely<Tables>,
  dialect: Dialect,
  input: ClaimInput,
): Promise<DeliveryJob[]> {
  const claimed = await claimIds(db, dialect, input);
  if (claimed.length === 0) return [];
  return loadJobs(db, claimed, input.token);
}

async function claimIds(db: Kysely<Tables>, dialect: Dialect, input: ClaimInput): Promise<string[]> {
  const { token, now, leaseMs, limit, perSubscription: cap } = input;
  let due = dueRows(db, now).limit(cap === undefined ? limit : limit * cap);
  if (cap !== undefined) due = due.where('subscription_id', 'not in', fullSubscriptions(db, now, cap));
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  const picked =
    cap === undefined
      ? db.selectFrom(due.as('due')).select('due.id')
      : withinCap(db, due, { now, cap, limit });
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ locked_by: token, locked_until: now + leaseMs, attempts: eb('attempts', '+', 1) }))
    // PostgreSQL may plan `id IN (subquery)` as a semi-join that runs the LIMIT … SKIP LOCKED subquery
    // again for every outer row, each run skipping the rows just locked, so the limit would not hold.
    // An array subquery is evaluated once.
    .where((eb) =>
      dialect === 'postgres' ? eb('id', '=', sql<string>`any(array(${picked}))`) : eb('id', 'in', picked),
    )
    .where('status', '=', 'pending')
    .where(unleased(now))
    .returning('id')
    .execute();
  return claimed.map((row) => row.id);
}

const unleased = (now: number) => (eb: ExpressionBuilder<Tables, 'webhook_deliveries'>) =>
  eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]);

/** Pending, due and not leased, earliest first. */
function dueRows(db: Kysely<Tables>, now: number) {
  return (
    db
      .selectFrom('webhook_deliveries')
      .select(['id', 'subscription_id', 'next_attempt_at'])
      // A literal, not a parameter: SQLite uses the partial index `webhook_deliveries_due` only then.
      .where('status', '=', sql.lit('pending'))
      .where('next_attempt_at', '<=', now)
      .where(unleased(now))
      .orderBy('next_attempt_at')
  );
}

/**
 * Of a window of due rows (subscriptions already at their cap left out), at most `cap − in flight` per
 * subscription, earliest first. A subscription with a long backlog can fill the window; it is then at
 * its cap, and the next claim sees past it (the worker claims again at once when that happens).
 */
function withinCap(
  db: Kysely<Tables>,
  due: ReturnType<typeof dueRows>,
  input: { now: number; cap: number; limit: number },
) {
  const ranked = db
    .selectFrom(due.as('due'))
    .leftJoin(
      leasesPerSubscription(db, input.now).as('leased'),
      'leased.subscription_id',
      'due.subscription_id',
    )
    .select((eb) => [
      'due.id',
      'due.next_attempt_at',
      sql<number>`row_number() over (partition by ${eb.ref('due.subscription_id')} order by ${eb.ref('due.next_attempt_at')}, ${eb.ref('due.id')})`.as(
        'rank',
      ),
      eb.fn.coalesce('leased.in_flight', eb.lit(0)).as('in_flight'),
    ]);
  return db
    .selectFrom(ranked.as('ranked'))
    .select('ranked.id')
    .where((eb) => eb(eb('ranked.rank', '+', eb.ref('ranked.in_flight')), '<=', input.cap))
    .orderBy('ranked.next_attempt_at')
    .limit(input.limit);
}

/** Attempts in flight per subscription: leases still held (by any worker, manual attempts included). */
function leasesPerSubscription(db: Kysely<Tables>, now: number) {
  return db
    .selectFrom('webhook_deliveries')
    .select((eb) => ['subscription_id', eb.fn.countAll<number>().as('in_flight')])
    .where('locked_by', 'is not', null)
    .where('locked_until', '>=', now)
    .groupBy('subscription_id');
}

function fullSubscriptions(db: Kysely<Tables>, now: number, cap: number) {
  return db
    .selectFrom('webhook_deliveries')
    .select('subscription_id')
    .where('locked_by', 'is not', null)
    .where('locked_until', '>=', now)
    .groupBy('subscription_id')
    .having((eb) => eb.fn.countAll(), '>=', cap);
}

/** Leases one delivery for a manual attempt; undefined if it is in flight elsewhere. */
export async function claimDelivery(
  db: Kysely<Tables>,
  input: { id: string; token: string; now: number; leaseMs: number },
): Promise<DeliveryJob | undefined> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      locked_by: input.token,
      locked_until: input.now + input.leaseMs,
      attempts: eb('attempts', '+', 1),
    }))
    .where('id', '=', input.id)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', input.now)]))
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return undefined;
  return (await loadJobs(db, [input.id], input.token))[0];
}

async function loadJobs(db: Kysely<Tables>, ids: string[], token: string): Promise<DeliveryJob[]> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .select([
      'd.id',
      'd.event_id',
      'd.subscription_id',
      'd.account_id',
      'd.mode',
      'd.status',
      'd.attempts',
      'e.type',
      'e.payload',
      'e.created_at as event_created_at',
      's.url',
      's.secret',
      's.previous_secret',
      's.previous_secret_expires_at',
      's.failing_since',
    ])
    .where('d.id', 'in', ids)
    .where('d.locked_by', '=', token)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    eventId: row.event_id,
    eventType: row.type,
    eventCreatedAt: Number(row.event_created_at),
    subscriptionId: row.subscription_id,
    accountId: row.account_id,
    mode: row.mode,
    status: row.status,
    attempts: Number(row.attempts),
    payload: row.payload,
    url: row.url,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt:
      row.previous_secret_expires_at === null ? null : Number(row.previous_secret_expires_at),
    subscriptionFailingSince: row.failing_since === null ? null : Number(row.failing_since),
    token,
  }));
}

export interface DeliveryUpdate {
  status: DeliveryStatus;
  nextAttemptAt: number | null;
  deliveredAt?: number;
  lastAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
}

/** Writes an attempt's result and ends the lease; false if the lease was lost (then nothing is changed). */
export async function completeDelivery(
  db: Kysely<Tables>,
  job: Pick<DeliveryJob, 'id' | 'token'>,
  update: DeliveryUpdate,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: update.status,
      next_attempt_at: update.nextAttemptAt,
      ...(update.deliveredAt === undefined ? {} : { delivered_at: update.deliveredAt }),
      last_attempt_at: update.lastAttemptAt,
      last_status: update.lastStatus,
      last_error: update.lastError,
      locked_by: null,
      locked_until: null,
    })
    .where('id', '=', job.id)
    .where('locked_by', '=', job.token)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Marks several successful attempts of one claim delivered at once (the worker's common case); returns
 * the ids whose lease was still held.
 */
export async function completeDelivered(
  db: Kysely<Tables>,
  input: { ids: string[]; token: string; at: number; status: number },
): Promise<Set<string>> {
  if (input.ids.length === 0) return new Set();
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'delivered',
      next_attempt_at: null,
      delivered_at: input.at,
      last_attempt_at: input.at,
      last_status: input.status,
      last_error: null,
      locked_by: null,
      locked_until: null,
    })
    .where('id', 'in', input.ids)
    .where('locked_by', '=', input.token)
    .returning('id')
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** A subscription was disabled: its waiting deliveries are parked (in-flight ones finish). */
export async function pauseDeliveries(db: Kysely<Tables>, subscriptionId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'paused' })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * A subscription was re-enabled, or its URL changed: its parked deliveries are pending again and every
 * waiting one is due now (a backoff earned by the old state or the old receiver no longer applies);
 * overdue ones keep their earlier time, so the oldest still go first.
 */
export async function resumeDeliveries(
  db: Kysely<Tables>,
  subscriptionId: string,
  now: number,
): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'pending',
      next_attempt_at: sql<number>`case when next_attempt_at is not null and next_attempt_at < ${now} then next_attempt_at else ${now} end`,
    })
    .where('subscription_id', '=', subscriptionId)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'paused'),
        eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '>', now)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Rescheduled deliveries whose subscription was paused or disabled while their attempt was in flight
 * are parked too (the pause could not touch a delivery that was being attempted).
 */
export async function pauseIfInactive(db: Kysely<Tables>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'paused' })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where('subscription_id', 'in', (eb) =>
      eb.selectFrom('webhook_subscriptions').select('id').where('active', '=', 0),
    )
    .execute();
}

/**
 * Of these deliveries, the ones that still exist (a subscription may have been deleted, with its
 * deliveries, while an attempt was in flight). On PostgreSQL their subscriptions, then the deliveries,
 * are locked against deletion until the caller's transaction ends, subscriptions first as a delete
 * cascades in that order.
 */
export async function lockLiveDeliveries(
  db: Kysely<Tables>,
  dialect: Dialect,
  deliveries: readonly { id: string; subscriptionId: string }[],
): Promise<Set<string>> {
  if (deliveries.length === 0) return new Set();
  if (dialect === 'postgres') {
    const subscriptions = [...new Set(deliveries.map((d) => d.subscriptionId))].sort();
    await db
      .selectFrom('webhook_subscriptions')
      .select('id')
      .where('id', 'in', subscriptions)
      .orderBy('id')
      .forKeyShare()
      .execute();
  }
  let query = db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('id', 'in', [...new Set(deliveries.map((d) => d.id))])
    .orderBy('id');
  if (dialect === 'postgres') query = query.forKeyShare();
  const rows = await query.execute();
  return new Set(rows.map((row) => row.id));
}

/** Gives leases back without a result (graceful stop); the deliveries are due again at once. */
export async function releaseDeliveries(db: Kysely<Tables>, token: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ locked_by: null, locked_until: null })
    .where('id', 'in', ids)
    .where('locked_by', '=', token)
    .execute();
}

export async function insertAttempts(
  db: Kysely<Tables>,
  attempts: Selectable<WebhookAttemptsTable>[],
): Promise<void> {
  if (attempts.length > 0) await db.insertInto('webhook_attempts').values(attempts).execute();
}

/** Deliveries waiting for an attempt (the queue depth). */
export async function countPendingDeliveries(db: Kysely<Tables>): Promise<number> {
  const { count } = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** Why a paused delivery was given up by `pruneWebhookHistory`. */
export const EXPIRED_WHILE_PAUSED =
  'Expired: the subscription stayed paused or disabled beyond the retention period.';

/**
 * Gives up deliveries that have waited paused since before `before` (their subscription stayed paused
 * or disabled for the whole retention period, so the queue of a subscription paused for good is bounded),
 * then deletes events older than `before` that have nothing left to deliver, with their deliveries and
 * attempts. Returns the number of events deleted.
 */
export async function pruneWebhookHistory(db: Kysely<Tables>, before: number): Promise<number> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, last_error: EXPIRED_WHILE_PAUSED })
    .where('status', '=', 'paused')
    .where('created_at', '<', before)
    .execute();
  const result = await db
    .deleteFrom('webhook_events')
    .where('created_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries')
            .select('webhook_deliveries.id')
            .whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id')
            .where('webhook_deliveries.status', 'in', ['pending', 'paused']),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
