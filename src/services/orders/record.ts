import type { Kysely } from 'kysely';
import type { Tenant } from '../../core/caller.js';
import { ApiError } from '../../core/errors.js';
import { normalisePzn } from '../../msv3/model.js';
import { orderFillsOf, orderLinesOf, orderLinesOfOrders } from '../../store/order-lines.js';
import { listOrders, type OrderListFilter, orderHistoryOf } from '../../store/order-listing.js';
import { findOrderById, type StoredOrder } from '../../store/orders.js';
import type { Tables } from '../../store/schema.js';
import { type OrderRecordJson, orderRecordJson } from './record-view.js';

/**
 * The order record and the listing (docs/orders.md "The order record"): what the gateway stored, read
 * without calling the wholesaler and without MSV3 credentials. An order belongs to the API key's account
 * and mode; another's is 404 `order_not_found`.
 */

export async function orderRecord(
  db: Kysely<Tables>,
  tenant: Tenant,
  orderId: string,
): Promise<OrderRecordJson> {
  const order = await findOrderById(db, orderId);
  if (order === undefined || order.accountId !== tenant.accountId || order.mode !== tenant.mode) {
    throw new ApiError('order_not_found', `No order ${orderId} for this API key.`, { param: 'order_id' });
  }
  return recordOf(db, order);
}

/** The record of a stored order; pass a transaction to read what it has written. */
export async function recordOf(db: Kysely<Tables>, order: StoredOrder): Promise<OrderRecordJson> {
  const [lines, fills, history] = await Promise.all([
    orderLinesOf(db, order.id),
    orderFillsOf(db, order.id),
    orderHistoryOf(db, order.id),
  ]);
  return orderRecordJson(order, lines, fills, history);
}

export type OrderSummaryJson = Omit<OrderRecordJson, 'sub_orders' | 'history'> & {
  sub_orders: Omit<OrderRecordJson['sub_orders'][number], 'items'>[];
};

export interface OrderListQuery extends Omit<OrderListFilter, 'pzn'> {
  pzn?: string;
  limit: number;
  startingAfter?: string;
}

/** A page of the tenant's orders, newest first; each without its items (the record has them). */
export async function listOrderSummaries(
  db: Kysely<Tables>,
  tenant: Tenant,
  query: OrderListQuery,
): Promise<{ orders: OrderSummaryJson[]; has_more: boolean }> {
  const page = await listOrders(db, tenant, {
    ...query,
    ...(query.pzn === undefined ? {} : { pzn: normalisePzn(query.pzn) }),
  });
  const lines = await orderLinesOfOrders(
    db,
    page.orders.map((order) => order.id),
  );
  return {
    orders: page.orders.map((order) => {
      const {
        sub_orders,
        history: _history,
        ...record
      } = orderRecordJson(order, lines.get(order.id) ?? [], [], []);
      return { ...record, sub_orders: sub_orders.map(({ items: _items, ...sub }) => sub) };
    }),
    has_more: page.hasMore,
  };
}
