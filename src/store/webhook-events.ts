import type { Kysely } from 'kysely';
import type { Tenant } from '../core/caller.js';
import type { EventType } from '../core/event-types.js';
import type { Tables } from './schema.js';

/**
 * The events feed (`GET /v1/events`): the events recorded for one account in one mode, read back from the
 * outbox table `webhook_events` as the exact JSON body webhooks send (`payload`). Test pings
 * (`POST /v1/webhooks/{id}/test`) are not events of the account and are left out. Events live as long as
 * the webhook history (`pruneWebhookHistory`, WEBHOOK_RETENTION_DAYS).
 */

export interface EventFilter {
  type?: EventType;
  wholesaler?: string;
  /** Epoch milliseconds, inclusive. */
  createdAfter?: number;
  /** Epoch milliseconds, exclusive. */
  createdBefore?: number;
}

export interface EventPage {
  /** The events' JSON bodies, newest first, as stored. */
  payloads: string[];
  hasMore: boolean;
}

/** The type only the test endpoint sends; never in the feed. */
const PING = 'ping';

/**
 * Newest first (ties in `created_at` by id, descending), `limit` per page, older than the event
 * `startingAfter`. A cursor that is not an event of this feed (another account's or mode's, a ping, pruned)
 * gives an empty page, as the delivery log does.
 */
export async function listEvents(
  db: Kysely<Tables>,
  tenant: Tenant,
  page: EventFilter & { limit: number; startingAfter?: string },
): Promise<EventPage> {
  let query = db
    .selectFrom('webhook_events')
    .select('payload')
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .where('type', '!=', PING);
  if (page.type !== undefined) query = query.where('type', '=', page.type);
  if (page.wholesaler !== undefined) query = query.where('wholesaler', '=', page.wholesaler);
  if (page.createdAfter !== undefined) query = query.where('created_at', '>=', page.createdAfter);
  if (page.createdBefore !== undefined) query = query.where('created_at', '<', page.createdBefore);
  if (page.startingAfter !== undefined) {
    const cursor = await db
      .selectFrom('webhook_events')
      .select(['created_at', 'id'])
      .where('id', '=', page.startingAfter)
      .where('account_id', '=', tenant.accountId)
      .where('mode', '=', tenant.mode)
      .where('type', '!=', PING)
      .executeTakeFirst();
    if (cursor === undefined) return { payloads: [], hasMore: false };
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', cursor.created_at),
        eb.and([eb('created_at', '=', cursor.created_at), eb('id', '<', cursor.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  return {
    payloads: rows.slice(0, page.limit).map((row) => row.payload),
    hasMore: rows.length > page.limit,
  };
}

/** One event's JSON body, if it is an event of this scope (pings excluded). */
export async function findEventPayload(
  db: Kysely<Tables>,
  tenant: Tenant,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_events')
    .select('payload')
    .where('id', '=', id)
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .where('type', '!=', PING)
    .executeTakeFirst();
  return row?.payload;
}
