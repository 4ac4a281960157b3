import { type Kysely, sql } from 'kysely';
import type { DeliveredEventType, EventType } from '../../core/event-types.js';
import type { KeyMode } from '../../core/key-mode.js';
import type { Clock } from '../../lib/clock.js';
import { newEventId, randomToken, TOKEN_LENGTH } from '../../lib/ids.js';
import { dialectOf } from '../../store/dialect.js';
import type { Tables } from '../../store/schema.js';
import { insertEventWithDeliveries } from '../../store/webhook-outbox.js';
import { subscriptionsFor, type WebhookSubscription } from '../../store/webhook-subscriptions.js';
import type { WebhookEvent } from '../verify.js';

/** The `data` of `wholesaler.status_changed` (its schema for the docs: src/http/schemas/webhook-events.ts). */
export interface WholesalerStatusData {
  wholesaler: string;
  status: 'up' | 'down';
  /** Why, in a few words (`connection refused`, `HTTP 503`, `answers again`). */
  reason: string | null;
  /** ISO 8601, when the change was seen. */
  changed_at: string;
}

/** PostgreSQL channel NOTIFYed when an event commits, so every worker wakes at once. */
export const NOTIFY_CHANNEL = 'msv3_webhooks';

export interface EventInput<Data = unknown> {
  accountId: string;
  mode: KeyMode;
  type: EventType;
  wholesaler: string;
  /** The pharmacy's MSV3 customer number at the wholesaler, where the event concerns one. */
  customerId?: string | null;
  /** The resource as the API returns it (see `src/http/schemas/webhook-events.ts`). */
  data: Data;
}

export interface RecordEventDeps {
  clock: Clock;
  /**
   * Wakes this process's delivery worker (`AppDeps.webhooks.wake`). Safe to call before the caller's
   * transaction commits: on SQLite the worker's claim waits for the connection, on PostgreSQL the
   * NOTIFY sent inside the transaction wakes every worker on commit.
   */
  wake?: () => void;
}

export interface RecordedEvent {
  event: WebhookEvent;
  /**
   * One per matching subscription; empty if nobody subscribed. Those of paused or disabled
   * subscriptions wait (`paused`) until the subscription is active again.
   */
  deliveryIds: string[];
  /** How many of them are due now (to active subscriptions). */
  due: number;
}

/**
 * Stores an event and one delivery per matching subscription (same account, mode and wholesaler, event
 * subscribed): pending for an active subscription, `paused` for a paused or disabled one, sent when it is
 * re-enabled (or given up after the retention period, see `pruneWebhookHistory`). Pass the transaction
 * of the state change that caused the event as `db`: both then commit or roll back together, and a
 * rolled-back change sends nothing. Given a plain `Kysely`, it opens its own transaction.
 *
 * ```ts
 * await db.transaction().execute(async (trx) => {
 *   await saveDeliveryNotice(trx, notice);
 *   await recordEvent(trx, { accountId, mode, type: 'delivery.received', wholesaler, customerId, data: notice }, deps);
 * });
 * ```
 */
export async function recordEvent<Data>(
  db: Kysely<Tables>,
  input: EventInput<Data>,
  deps: RecordEventDeps,
): Promise<RecordedEvent> {
  const write = async (trx: Kysely<Tables>) => {
    const subscriptions = await subscriptionsFor(trx, {
      accountId: input.accountId,
      mode: input.mode,
      wholesaler: input.wholesaler,
      type: input.type,
      includeInactive: true,
    });
    return storeEvent(trx, input, subscriptions, deps.clock.now());
  };
  const recorded = db.isTransaction ? await write(db) : await db.transaction().execute(write);
  if (recorded.due > 0) deps.wake?.();
  return recorded;
}

/** `recordEvent` with its deps bound, built once (src/wiring.ts): how services record their events. */
export type EventRecorder = <Data>(trx: Kysely<Tables>, input: EventInput<Data>) => Promise<RecordedEvent>;

export function eventRecorder(deps: RecordEventDeps): EventRecorder {
  return (trx, input) => recordEvent(trx, input, deps);
}

export interface WholesalerStatusChange {
  wholesaler: string;
  /** Sandbox (`test`) and live endpoints are watched separately. */
  mode: KeyMode;
  up: boolean;
  /** Why, in a few words (`connection refused`, `HTTP 503`, `answers again`). */
  reason?: string | null;
  /** Custom wholesalers: only their owner hears about them. */
  accountId?: string;
}

/**
 * Records a `wholesaler.status_changed` event for every account with a subscription to it (one event per
 * account, all in one transaction; paused deliveries for paused or disabled subscriptions, as in
 * `recordEvent`) and returns them. A change that concerns one account (`accountId`: the sandbox, a custom
 * wholesaler) is recorded for that account even without a subscription, for its events feed
 * (`GET /v1/events`), as `recordEvent` records every event; a catalogue wholesaler is shared by every
 * account, and its changes are recorded only for the accounts subscribed to them.
 */
export async function recordWholesalerStatusChange(
  db: Kysely<Tables>,
  change: WholesalerStatusChange,
  deps: RecordEventDeps,
): Promise<RecordedEvent[]> {
  const write = async (trx: Kysely<Tables>) => {
    const subscriptions = await subscriptionsFor(trx, {
      accountId: change.accountId,
      mode: change.mode,
      wholesaler: change.wholesaler,
      type: 'wholesaler.status_changed',
      includeInactive: true,
    });
    const byAccount = new Map<string, WebhookSubscription[]>();
    if (change.accountId !== undefined && (await accountExists(trx, change.accountId))) {
      byAccount.set(change.accountId, []);
    }
    for (const s of subscriptions) byAccount.set(s.accountId, [...(byAccount.get(s.accountId) ?? []), s]);
    const now = deps.clock.now();
    const data: WholesalerStatusData = {
      wholesaler: change.wholesaler,
      status: change.up ? 'up' : 'down',
      reason: change.reason ?? null,
      changed_at: new Date(now).toISOString(),
    };
    const recorded: RecordedEvent[] = [];
    for (const [accountId, own] of byAccount) {
      const input: EventInput = { ...change, accountId, type: 'wholesaler.status_changed', data };
      recorded.push(await storeEvent(trx, input, own, now));
    }
    return recorded;
  };
  const recorded = db.isTransaction ? await write(db) : await db.transaction().execute(write);
  if (recorded.some((r) => r.due > 0)) deps.wake?.();
  return recorded;
}

/** An announcement may outlive its account (deleted meanwhile); its event would then break the foreign key. */
async function accountExists(trx: Kysely<Tables>, accountId: string): Promise<boolean> {
  const row = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  return row !== undefined;
}

/** The test endpoint's event, for one subscription, leased to `token` for an immediate attempt. */
export async function recordPing(
  db: Kysely<Tables>,
  subscription: WebhookSubscription,
  input: { now: number; token: string; leaseMs: number },
): Promise<RecordedEvent> {
  const event = buildEvent(
    {
      accountId: subscription.accountId,
      mode: subscription.mode,
      type: 'ping',
      wholesaler: subscription.wholesaler,
      data: { webhook_id: subscription.id, message: 'Test event from msv3-gateway.' },
    },
    input.now,
  );
  const deliveryId = newDeliveryId();
  await insertEventWithDeliveries(db, eventRow(event, subscription.accountId, subscription.mode), [
    {
      ...deliveryRow(deliveryId, event.id, subscription, input.now),
      status: 'pending',
      attempts: 1,
      next_attempt_at: null,
      locked_by: input.token,
      locked_until: input.now + input.leaseMs,
    },
  ]);
  return { event, deliveryIds: [deliveryId], due: 0 };
}

async function storeEvent(
  trx: Kysely<Tables>,
  input: EventInput,
  subscriptions: WebhookSubscription[],
  now: number,
): Promise<RecordedEvent> {
  const event = buildEvent(input, now);
  const deliveries = subscriptions.map((s) => deliveryRow(newDeliveryId(), event.id, s, now));
  await insertEventWithDeliveries(trx, eventRow(event, input.accountId, input.mode), deliveries);
  const due = deliveries.filter((d) => d.status === 'pending').length;
  if (due > 0) await notifyWorkers(trx);
  return { event, deliveryIds: deliveries.map((d) => d.id), due };
}

/**
 * On PostgreSQL, wakes the workers of every process when `trx` commits (a NOTIFY inside the
 * transaction); nothing on SQLite, where only this process's worker can claim.
 */
export async function notifyWorkers(trx: Kysely<Tables>): Promise<void> {
  if (dialectOf(trx as Kysely<unknown>) === 'postgres') {
    await sql`select pg_notify(${NOTIFY_CHANNEL}, '')`.execute(trx);
  }
}

function buildEvent(
  input: Omit<EventInput, 'type'> & { type: DeliveredEventType },
  now: number,
): WebhookEvent {
  return {
    id: newEventId(),
    type: input.type,
    created_at: new Date(now).toISOString(),
    livemode: input.mode === 'live',
    wholesaler: input.wholesaler,
    customer_id: input.customerId ?? null,
    data: input.data,
  };
}

function eventRow(event: WebhookEvent, accountId: string, mode: KeyMode) {
  return {
    id: event.id,
    account_id: accountId,
    mode,
    type: event.type,
    wholesaler: event.wholesaler,
    customer_id: event.customer_id,
    payload: JSON.stringify(event),
    created_at: Date.parse(event.created_at),
  };
}

function deliveryRow(id: string, eventId: string, subscription: WebhookSubscription, now: number) {
  return {
    id,
    event_id: eventId,
    subscription_id: subscription.id,
    account_id: subscription.accountId,
    mode: subscription.mode,
    status: subscription.active ? ('pending' as const) : ('paused' as const),
    attempts: 0,
    next_attempt_at: now,
    locked_by: null,
    locked_until: null,
    delivered_at: null,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    created_at: now,
  };
}

export const newDeliveryId = (): string => `whd_${randomToken(TOKEN_LENGTH)}`;
export const newAttemptId = (): string => `wha_${randomToken(TOKEN_LENGTH)}`;
