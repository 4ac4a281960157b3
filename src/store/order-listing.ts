import type { Kysely, Selectable } from 'kysely';
import type { Tenant } from '../core/caller.js';
import { type StoredOrder, toStoredOrder } from './orders.js';
import type { OrderHistoryTable } from './orders-table.js';
import type { Tables } from './schema.js';

/** The order record's history and the listing of a tenant's orders (docs/orders.md). */

export type OrderHistoryRow = Selectable<OrderHistoryTable>;

/** Appends a change of placement status or MSV3 status; pass the transaction of the change. */
export async function appendOrderHistory(db: Kysely<Tables>, row: OrderHistoryRow): Promise<void> {
  await db.insertInto('order_history').values(row).execute();
}

export async function orderHistoryOf(db: Kysely<Tables>, orderId: string): Promise<OrderHistoryRow[]> {
  const rows = await db
    .selectFrom('order_history')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ ...row, at: Number(row.at) }));
}

export interface OrderListFilter {
  wholesaler?: string;
  placementStatus?: string;
  createdAfter?: number;
  createdBefore?: number;
  /** Orders with a line of this PZN (8 digits). */
  pzn?: string;
}

/**
 * The tenant's orders, newest first (ties by id, descending), `limit` per page, older than the order
 * `startingAfter`. A cursor that is not an order of this tenant gives an empty page.
 */
export async function listOrders(
  db: Kysely<Tables>,
  tenant: Tenant,
  page: OrderListFilter & { limit: number; startingAfter?: string },
): Promise<{ orders: StoredOrder[]; hasMore: boolean }> {
  let query = db
    .selectFrom('orders')
    .selectAll()
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode);
  if (page.wholesaler !== undefined) query = query.where('wholesaler', '=', page.wholesaler);
  if (page.placementStatus !== undefined) query = query.where('placement_status', '=', page.placementStatus);
  if (page.createdAfter !== undefined) query = query.where('created_at', '>=', page.createdAfter);
  if (page.createdBefore !== undefined) query = query.where('created_at', '<', page.createdBefore);
  const pzn = page.pzn;
  if (pzn !== undefined) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('order_lines')
          .select('order_lines.order_id')
          .whereRef('order_lines.order_id', '=', 'orders.id')
          .where('order_lines.pzn', '=', pzn),
      ),
    );
  }
  if (page.startingAfter !== undefined) {
    const cursor = await db
      .selectFrom('orders')
      .select(['created_at', 'id'])
      .where('id', '=', page.startingAfter)
      .where('account_id', '=', tenant.accountId)
      .where('mode', '=', tenant.mode)
      .executeTakeFirst();
    if (cursor === undefined) return { orders: [], hasMore: false };
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
  return { orders: rows.slice(0, page.limit).map(toStoredOrder), hasMore: rows.length > page.limit };
}
