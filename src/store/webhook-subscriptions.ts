import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Tenant } from '../core/caller.js';
import { EVERY, type EventSelector, type EventType } from '../core/event-types.js';
import type { KeyMode } from '../core/key-mode.js';
import { dialectOf } from './dialect.js';
import type { Tables } from './schema.js';
import type { WebhookSubscriptionsTable } from './webhook-tables.js';

/** Everything about subscriptions is scoped to the caller's account and mode. */
export interface WebhookSubscription {
  id: string;
  accountId: string;
  mode: KeyMode;
  url: string;
  wholesaler: string;
  /** Event types, or `["*"]` for all. */
  events: EventSelector[];
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  active: boolean;
  disabledReason: string | null;
  disabledAt: number | null;
  failingSince: number | null;
  createdAt: number;
  updatedAt: number;
}

export async function insertSubscription(
  db: Kysely<Tables>,
  subscription: WebhookSubscription,
): Promise<void> {
  await db.insertInto('webhook_subscriptions').values(toRow(subscription)).execute();
}

export async function findSubscription(
  db: Kysely<Tables>,
  tenant: Tenant,
  id: string,
): Promise<WebhookSubscription | undefined> {
  const row = await db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .executeTakeFirst();
  return row && toSubscription(row);
}

export async function listSubscriptions(db: Kysely<Tables>, tenant: Tenant): Promise<WebhookSubscription[]> {
  const rows = await db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toSubscription);
}

export async function countSubscriptions(db: Kysely<Tables>, tenant: Tenant): Promise<number> {
  const { count } = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export type SubscriptionChanges = Partial<
  Pick<
    WebhookSubscription,
    | 'url'
    | 'events'
    | 'secret'
    | 'previousSecret'
    | 'previousSecretExpiresAt'
    | 'active'
    | 'disabledReason'
    | 'disabledAt'
    | 'failingSince'
  >
> & { updatedAt: number };

/** Applies `changes` to the scoped subscription; the updated one, or undefined if there is none. */
export async function updateSubscription(
  db: Kysely<Tables>,
  tenant: Tenant,
  id: string,
  changes: SubscriptionChanges,
): Promise<WebhookSubscription | undefined> {
  const set: Updateable<WebhookSubscriptionsTable> = { updated_at: changes.updatedAt };
  if (changes.url !== undefined) set.url = changes.url;
  if (changes.events !== undefined) set.events = JSON.stringify(changes.events);
  if (changes.secret !== undefined) set.secret = changes.secret;
  if (changes.previousSecret !== undefined) set.previous_secret = changes.previousSecret;
  if (changes.previousSecretExpiresAt !== undefined) {
    set.previous_secret_expires_at = changes.previousSecretExpiresAt;
  }
  if (changes.active !== undefined) set.active = changes.active ? 1 : 0;
  if (changes.disabledReason !== undefined) set.disabled_reason = changes.disabledReason;
  if (changes.disabledAt !== undefined) set.disabled_at = changes.disabledAt;
  if (changes.failingSince !== undefined) set.failing_since = changes.failingSince;
  await db
    .updateTable('webhook_subscriptions')
    .set(set)
    .where('id', '=', id)
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .execute();
  return findSubscription(db, tenant, id);
}

/** Deletes the subscription with its deliveries and attempts; false if there was none in scope. */
export async function deleteSubscription(db: Kysely<Tables>, tenant: Tenant, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_subscriptions')
    .where('id', '=', id)
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Active subscriptions (with `includeInactive`, paused and disabled ones too) that want `type` for
 * `wholesaler` (or every wholesaler: `*`) in `mode`, of one account or (for wholesaler status changes) of every account.
 */
export async function subscriptionsFor(
  db: Kysely<Tables>,
  filter: {
    accountId?: string;
    mode: KeyMode;
    wholesaler: string;
    type: EventType;
    includeInactive?: boolean;
  },
): Promise<WebhookSubscription[]> {
  let query = db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('mode', '=', filter.mode)
    .where('wholesaler', 'in', [filter.wholesaler, EVERY]);
  if (!filter.includeInactive) query = query.where('active', '=', 1);
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  // Called inside the transaction that then inserts a delivery per subscription: on PostgreSQL the rows
  // read are locked against a concurrent DELETE until it commits (KEY SHARE: updates still go ahead),
  // which would otherwise make that insert fail its foreign key (a 500). SQLite has one writer at a time.
  if (dialectOf(db as Kysely<unknown>) === 'postgres') query = query.forKeyShare();
  const rows = await query.orderBy('id').execute();
  return rows.map(toSubscription).filter((s) => s.events.includes(filter.type) || s.events.includes(EVERY));
}

/** After a successful attempt: the failure run ends. */
export async function markSubscriptionHealthy(db: Kysely<Tables>, id: string): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ failing_since: null })
    .where('id', '=', id)
    .where('failing_since', 'is not', null)
    .execute();
}

/**
 * After a failed attempt: starts the failure run if none is open, and disables the subscription when
 * the run has lasted `disableAfterMs`. Returns true if this call disabled it.
 */
export async function markSubscriptionFailing(
  db: Kysely<Tables>,
  id: string,
  now: number,
  disableAfterMs: number,
  reason: string,
): Promise<boolean> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ failing_since: now })
    .where('id', '=', id)
    .where('failing_since', 'is', null)
    .execute();
  const result = await db
    .updateTable('webhook_subscriptions')
    .set({ active: 0, disabled_reason: reason, disabled_at: now, updated_at: now })
    .where('id', '=', id)
    .where('active', '=', 1)
    .where('failing_since', '<=', now - disableAfterMs)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Disables at once (HTTP 410 from the receiver). Returns true if it was active. */
export async function disableSubscription(
  db: Kysely<Tables>,
  id: string,
  now: number,
  reason: string,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_subscriptions')
    .set({ active: 0, disabled_reason: reason, disabled_at: now, updated_at: now })
    .where('id', '=', id)
    .where('active', '=', 1)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

function toRow(s: WebhookSubscription): Selectable<WebhookSubscriptionsTable> {
  return {
    id: s.id,
    account_id: s.accountId,
    mode: s.mode,
    url: s.url,
    wholesaler: s.wholesaler,
    events: JSON.stringify(s.events),
    secret: s.secret,
    previous_secret: s.previousSecret,
    previous_secret_expires_at: s.previousSecretExpiresAt,
    active: s.active ? 1 : 0,
    disabled_reason: s.disabledReason,
    disabled_at: s.disabledAt,
    failing_since: s.failingSince,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export function toSubscription(row: Selectable<WebhookSubscriptionsTable>): WebhookSubscription {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    url: row.url,
    wholesaler: row.wholesaler,
    events: JSON.parse(row.events) as EventSelector[],
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: numberOrNull(row.previous_secret_expires_at),
    active: Number(row.active) === 1,
    disabledReason: row.disabled_reason,
    disabledAt: numberOrNull(row.disabled_at),
    failingSince: numberOrNull(row.failing_since),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function numberOrNull(value: number | null): number | null {
  return value === null ? null : Number(value);
}
