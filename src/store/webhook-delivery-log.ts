import type { Kysely, Selectable } from 'kysely';
import type { Tenant } from '../core/caller.js';
import type { Tables } from './schema.js';
import type { DeliveryStatus, WebhookAttemptsTable, WebhookDeliveriesTable } from './webhook-tables.js';

/** The delivery log of a subscription, as the API shows it. */

export interface DeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  subscriptionId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  deliveredAt: number | null;
  lastAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  attemptLog: AttemptRecord[];
}

export interface AttemptRecord {
  id: string;
  attempt: number;
  trigger: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  outcome: string;
  error: string | null;
}

/** Newest first, `limit` per page after the delivery `startingAfter`; with their attempts, newest first. */
export async function listDeliveries(
  db: Kysely<Tables>,
  tenant: Tenant,
  subscriptionId: string,
  page: { limit: number; startingAfter?: string; status?: DeliveryStatus },
): Promise<{ deliveries: DeliveryRecord[]; hasMore: boolean }> {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type')
    .where('d.subscription_id', '=', subscriptionId)
    .where('d.account_id', '=', tenant.accountId)
    .where('d.mode', '=', tenant.mode);
  if (page.status !== undefined) query = query.where('d.status', '=', page.status);
  if (page.startingAfter !== undefined) {
    const cursor = await db
      .selectFrom('webhook_deliveries')
      .select(['created_at', 'id'])
      .where('id', '=', page.startingAfter)
      .where('subscription_id', '=', subscriptionId)
      .executeTakeFirst();
    if (cursor === undefined) return { deliveries: [], hasMore: false };
    query = query.where((eb) =>
      eb.or([
        eb('d.created_at', '<', cursor.created_at),
        eb.and([eb('d.created_at', '=', cursor.created_at), eb('d.id', '<', cursor.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const pageRows = rows.slice(0, page.limit);
  const attempts = await attemptsOf(
    db,
    pageRows.map((r) => r.id),
  );
  return {
    deliveries: pageRows.map((row) => ({
      ...toDeliveryRecord(row, row.type),
      attemptLog: attempts.get(row.id) ?? [],
    })),
    hasMore: rows.length > page.limit,
  };
}

export async function findDelivery(
  db: Kysely<Tables>,
  tenant: Tenant,
  subscriptionId: string,
  id: string,
): Promise<DeliveryRecord | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type')
    .where('d.id', '=', id)
    .where('d.subscription_id', '=', subscriptionId)
    .where('d.account_id', '=', tenant.accountId)
    .where('d.mode', '=', tenant.mode)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const attempts = await attemptsOf(db, [id]);
  return { ...toDeliveryRecord(row, row.type), attemptLog: attempts.get(id) ?? [] };
}

/** Attempts kept per delivery in listings. */
const ATTEMPTS_SHOWN = 25;

async function attemptsOf(db: Kysely<Tables>, deliveryIds: string[]): Promise<Map<string, AttemptRecord[]>> {
  const byDelivery = new Map<string, AttemptRecord[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('started_at', 'desc')
    .orderBy('attempt', 'desc')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    if (list.length < ATTEMPTS_SHOWN) list.push(toAttemptRecord(row));
    byDelivery.set(row.delivery_id, list);
  }
  return byDelivery;
}

function toDeliveryRecord(
  row: Selectable<WebhookDeliveriesTable>,
  eventType: string,
): Omit<DeliveryRecord, 'attemptLog'> {
  const n = (value: number | null) => (value === null ? null : Number(value));
  return {
    id: row.id,
    eventId: row.event_id,
    eventType,
    subscriptionId: row.subscription_id,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: n(row.next_attempt_at),
    deliveredAt: n(row.delivered_at),
    lastAttemptAt: n(row.last_attempt_at),
    lastStatus: n(row.last_status),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
  };
}

function toAttemptRecord(row: Selectable<WebhookAttemptsTable>): AttemptRecord {
  return {
    id: row.id,
    attempt: Number(row.attempt),
    trigger: row.trigger,
    startedAt: Number(row.started_at),
    durationMs: Number(row.duration_ms),
    statusCode: row.status_code === null ? null : Number(row.status_code),
    outcome: row.outcome,
    error: row.error,
  };
}
