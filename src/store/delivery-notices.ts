import { createHash } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { KeyMode } from '../core/key-mode.js';
import type { Clock } from '../lib/clock.js';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import type { DeliveryNoticesTable } from './delivery-notices-table.js';
import type { Tables } from './schema.js';

/**
 * The delivery notices one pharmacy has seen through this gateway. Every read and write is scoped to
 * account, mode, wholesaler and MSV3 customer; callers must have had the wholesaler accept that
 * customer's credentials in the same request before they read (see `services/deliveries/history.ts`).
 */

export interface CustomerScope {
  accountId: string;
  mode: KeyMode;
  /** The wholesaler id as requested. */
  wholesaler: string;
  /** From `customerHash(username)`. */
  customerHash: string;
}

export interface StoredNotice {
  notice: DeliveryNotice;
  firstSeenAt: number;
  lastSeenAt: number;
  confirmedAt: number | null;
}

/** What runs, inside the storing transaction, for a notice this customer had never been seen with. */
export type FirstSightHandler = (trx: Transaction<Tables>, stored: StoredNotice) => Promise<void>;

/** The stored form of a customer id: equality is all scoping needs (see `DeliveryNoticesTable`). */
export function customerHash(username: string): string {
  return createHash('sha256').update(`msv3-customer:${username}`, 'utf8').digest('hex');
}

/** The equality filter every query carries (`.where((eb) => eb.and(scopeFilter(scope)))`). */
function scopeFilter(scope: CustomerScope) {
  return {
    account_id: scope.accountId,
    mode: scope.mode,
    wholesaler: scope.wholesaler,
    customer_hash: scope.customerHash,
  };
}

/**
 * Stores the notices in one transaction: new ones are inserted and handed to `onFirstSight` (which
 * records webhook events in the same transaction, so an event exists exactly when its notice does);
 * known ones get their content and `last_seen_at` refreshed. Returns them in the given order.
 */
export async function saveSeenNotices(
  db: Kysely<Tables>,
  clock: Clock,
  scope: CustomerScope,
  notices: readonly DeliveryNotice[],
  onFirstSight: FirstSightHandler,
): Promise<StoredNotice[]> {
  if (notices.length === 0) return [];
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    const saved: StoredNotice[] = [];
    for (const notice of notices) {
      const inserted = await trx
        .insertInto('delivery_notices')
        .values({
          account_id: scope.accountId,
          mode: scope.mode,
          wholesaler: scope.wholesaler,
          customer_hash: scope.customerHash,
          tracking_number: notice.deliveryNoteNumber,
          ...contentColumns(notice),
          first_seen_at: now,
          last_seen_at: now,
          confirmed_at: null,
        })
        .onConflict((oc) =>
          oc.columns(['account_id', 'mode', 'wholesaler', 'customer_hash', 'tracking_number']).doNothing(),
        )
        .returning('tracking_number')
        .executeTakeFirst();
      if (inserted !== undefined) {
        const stored = { notice, firstSeenAt: now, lastSeenAt: now, confirmedAt: null };
        await onFirstSight(trx, stored);
        saved.push(stored);
        continue;
      }
      const row = await trx
        .updateTable('delivery_notices')
        .set({ ...contentColumns(notice), last_seen_at: now })
        .where((eb) => eb.and(scopeFilter(scope)))
        .where('tracking_number', '=', notice.deliveryNoteNumber)
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw new Error(`delivery notice ${notice.deliveryNoteNumber} vanished`);
      saved.push(toStoredNotice(row));
    }
    return saved;
  });
}

/** Marks the notices as confirmed through this gateway; numbers never seen are ignored. */
export async function markNoticesConfirmed(
  db: Kysely<Tables>,
  clock: Clock,
  scope: CustomerScope,
  trackingNumbers: readonly string[],
): Promise<void> {
  if (trackingNumbers.length === 0) return;
  await db
    .updateTable('delivery_notices')
    .set({ confirmed_at: clock.now() })
    .where((eb) => eb.and(scopeFilter(scope)))
    .where('tracking_number', 'in', [...trackingNumbers])
    .where('confirmed_at', 'is', null)
    .execute();
}

export async function findSeenNotice(
  db: Kysely<Tables>,
  scope: CustomerScope,
  trackingNumber: string,
): Promise<StoredNotice | undefined> {
  const row = await findRow(db, scope, trackingNumber);
  return row === undefined ? undefined : toStoredNotice(row);
}

/** The notice whose PDF delivery note has this document id, if this customer has seen one. */
export async function findSeenNoticeByDocument(
  db: Kysely<Tables>,
  scope: CustomerScope,
  documentId: string,
): Promise<StoredNotice | undefined> {
  const row = await db
    .selectFrom('delivery_notices')
    .selectAll()
    .where((eb) => eb.and(scopeFilter(scope)))
    .where('document_id', '=', documentId.toLowerCase())
    .executeTakeFirst();
  return row === undefined ? undefined : toStoredNotice(row);
}

export interface HistoryPageQuery {
  /** 1..100. */
  limit: number;
  /** Tracking number of the last notice of the previous page. */
  startingAfter?: string;
  /** Inclusive bounds on the document date, `YYYY-MM-DD`. */
  dateFrom?: string;
  dateTo?: string;
}

export interface HistoryPage {
  notices: StoredNotice[];
  hasMore: boolean;
}

/** Thrown when `startingAfter` names a notice this customer has not seen. */
export class UnknownCursorError extends Error {
  override readonly name = 'UnknownCursorError';
}

/** One page of the customer's notices, newest document date first (tracking number descending on ties). */
export async function listSeenNotices(
  db: Kysely<Tables>,
  scope: CustomerScope,
  query: HistoryPageQuery,
): Promise<HistoryPage> {
  let select = db
    .selectFrom('delivery_notices')
    .selectAll()
    .where((eb) => eb.and(scopeFilter(scope)));
  if (query.dateFrom !== undefined) select = select.where('document_date', '>=', query.dateFrom);
  if (query.dateTo !== undefined) select = select.where('document_date', '<=', query.dateTo);
  if (query.startingAfter !== undefined) {
    const cursor = await findRow(db, scope, query.startingAfter);
    if (cursor === undefined) throw new UnknownCursorError(query.startingAfter);
    select = select.where((eb) =>
      eb.or([
        eb('document_date', '<', cursor.document_date),
        eb.and([
          eb('document_date', '=', cursor.document_date),
          eb('tracking_number', '<', cursor.tracking_number),
        ]),
      ]),
    );
  }
  const rows = await select
    .orderBy('document_date', 'desc')
    .orderBy('tracking_number', 'desc')
    .limit(query.limit + 1)
    .execute();
  return { notices: rows.slice(0, query.limit).map(toStoredNotice), hasMore: rows.length > query.limit };
}

function findRow(
  db: Kysely<Tables>,
  scope: CustomerScope,
  trackingNumber: string,
): Promise<Selectable<DeliveryNoticesTable> | undefined> {
  return db
    .selectFrom('delivery_notices')
    .selectAll()
    .where((eb) => eb.and(scopeFilter(scope)))
    .where('tracking_number', '=', trackingNumber)
    .executeTakeFirst();
}

function contentColumns(notice: DeliveryNotice) {
  return {
    barcode: notice.barcodeReference,
    document_date: notice.documentDate.slice(0, 10),
    document_id: notice.documentId?.toLowerCase() ?? null,
    notice: JSON.stringify(notice),
  };
}

function toStoredNotice(row: Selectable<DeliveryNoticesTable>): StoredNotice {
  return {
    notice: JSON.parse(row.notice) as DeliveryNotice,
    firstSeenAt: Number(row.first_seen_at),
    lastSeenAt: Number(row.last_seen_at),
    confirmedAt: row.confirmed_at === null ? null : Number(row.confirmed_at),
  };
}
