import type { Kysely, Selectable } from 'kysely';
import type { OrderFillsTable, OrderLinesTable } from './orders-table.js';
import type { Tables } from './schema.js';

/**
 * The lines of stored orders and the delivery-note parts credited to them (the order record,
 * docs/orders.md). The order service decides what to write; this module only stores and finds.
 */

export type OrderLineRow = Selectable<OrderLinesTable>;
export type OrderFillRow = Selectable<OrderFillsTable>;

export type NewOrderLine = Pick<
  OrderLinesTable,
  | 'sub_order_id'
  | 'pzn'
  | 'sub_order_index'
  | 'line_index'
  | 'order_type'
  | 'order_label'
  | 'quantity_ordered'
>;

/** The lines of an order, written before it is sent; a repeated call (a resumed order) adds nothing. */
export async function ensureOrderLines(
  db: Kysely<Tables>,
  orderId: string,
  lines: readonly NewOrderLine[],
): Promise<void> {
  // 12 columns a row: chunks stay far below SQLite's limit of bound parameters.
  for (let i = 0; i < lines.length; i += 500) {
    await db
      .insertInto('order_lines')
      .values(
        lines.slice(i, i + 500).map((line) => ({
          ...line,
          order_id: orderId,
          quantity_confirmed: null,
          returned_label: null,
          substitute_pzn: null,
          quantity_delivered: 0,
          quantity_short: 0,
        })),
      )
      .onConflict((oc) => oc.columns(['order_id', 'sub_order_id', 'pzn']).doNothing())
      .execute();
  }
}

export interface AnsweredLine {
  subOrderId: string;
  pzn: string;
  confirmed: number;
  returnedLabel: string | null;
  substitutePzn: string | null;
}

/** What the wholesaler answered per line. Pass the transaction of the order's change. */
export async function recordAnsweredLines(
  db: Kysely<Tables>,
  orderId: string,
  lines: readonly AnsweredLine[],
): Promise<void> {
  for (const line of lines) {
    await db
      .updateTable('order_lines')
      .set({
        quantity_confirmed: line.confirmed,
        returned_label: line.returnedLabel,
        substitute_pzn: line.substitutePzn,
      })
      .where('order_id', '=', orderId)
      .where('sub_order_id', '=', line.subOrderId)
      .where('pzn', '=', line.pzn)
      .execute();
  }
}

export async function orderLinesOf(db: Kysely<Tables>, orderId: string): Promise<OrderLineRow[]> {
  return db
    .selectFrom('order_lines')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('sub_order_index')
    .orderBy('line_index')
    .execute();
}

export async function orderFillsOf(db: Kysely<Tables>, orderId: string): Promise<OrderFillRow[]> {
  return db
    .selectFrom('order_fills')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('document_date')
    .orderBy('tracking_number')
    .orderBy('note_line')
    .orderBy('kind')
    .orderBy('part')
    .execute();
}

/** One pharmacy at one wholesaler: whose orders a delivery notice may fill. */
export interface OrderCustomer {
  accountId: string;
  mode: string;
  wholesaler: string;
  customerId: string;
}

/** The customer's order lines of a sub-order (a notice's `AuftragsID`). */
export async function linesOfSubOrder(
  db: Kysely<Tables>,
  customer: OrderCustomer,
  subOrderId: string,
): Promise<OrderLineRow[]> {
  return db
    .selectFrom('order_lines')
    .innerJoin('orders', 'orders.id', 'order_lines.order_id')
    .selectAll('order_lines')
    .where('order_lines.sub_order_id', '=', subOrderId)
    .where('orders.account_id', '=', customer.accountId)
    .where('orders.mode', '=', customer.mode as never)
    .where('orders.wholesaler', '=', customer.wholesaler)
    .where('orders.customer_id', '=', customer.customerId)
    .execute();
}

/**
 * The customer's answered lines that still wait for goods, of one order type and label (the one sent or
 * the one the wholesaler returned) and for one PZN (ordered or substituted), placed from `after` up to
 * `before`; oldest order first.
 */
export async function openLinesFor(
  db: Kysely<Tables>,
  customer: OrderCustomer,
  match: { orderType: string; label: string; pzn: string; before: number; after: number },
): Promise<(OrderLineRow & { created_at: number })[]> {
  const rows = await db
    .selectFrom('order_lines')
    .innerJoin('orders', 'orders.id', 'order_lines.order_id')
    .selectAll('order_lines')
    .select('orders.created_at')
    .where('orders.account_id', '=', customer.accountId)
    .where('orders.mode', '=', customer.mode as never)
    .where('orders.wholesaler', '=', customer.wholesaler)
    .where('orders.customer_id', '=', customer.customerId)
    .where('orders.created_at', '<=', match.before)
    .where('orders.created_at', '>=', match.after)
    .where('order_lines.order_type', '=', match.orderType)
    .where((eb) =>
      eb.or([
        eb('order_lines.returned_label', '=', match.label),
        eb.and([
          eb('order_lines.returned_label', 'is', null),
          eb('order_lines.order_label', '=', match.label),
        ]),
      ]),
    )
    .where((eb) =>
      eb.or([eb('order_lines.pzn', '=', match.pzn), eb('order_lines.substitute_pzn', '=', match.pzn)]),
    )
    .where('order_lines.quantity_confirmed', 'is not', null)
    .whereRef(
      (eb) => eb('order_lines.quantity_delivered', '+', eb.ref('order_lines.quantity_short')),
      '<',
      'order_lines.quantity_confirmed',
    )
    .orderBy('orders.created_at')
    .orderBy('orders.id')
    .execute();
  return rows.map((row) => ({ ...row, created_at: Number(row.created_at) }));
}

/** Credits a part to a line; false when this part was credited to it already (a notice seen again). */
export async function creditFill(db: Kysely<Tables>, fill: OrderFillRow): Promise<boolean> {
  const inserted = await db
    .insertInto('order_fills')
    .values(fill)
    .onConflict((oc) => oc.columns(['order_id', 'tracking_number', 'note_line', 'part', 'kind']).doNothing())
    .returning('order_id')
    .executeTakeFirst();
  if (inserted === undefined) return false;
  const column = fill.kind === 'delivered' ? 'quantity_delivered' : 'quantity_short';
  await db
    .updateTable('order_lines')
    .set((eb) => ({ [column]: eb(column, '+', fill.quantity) }))
    .where('order_id', '=', fill.order_id)
    .where('sub_order_id', '=', fill.sub_order_id)
    .where('pzn', '=', fill.pzn)
    .execute();
  return true;
}

/** The lines of several orders (a page of the listing), by order id. */
export async function orderLinesOfOrders(
  db: Kysely<Tables>,
  orderIds: readonly string[],
): Promise<Map<string, OrderLineRow[]>> {
  const byOrder = new Map<string, OrderLineRow[]>(orderIds.map((id) => [id, []]));
  if (orderIds.length === 0) return byOrder;
  const rows = await db
    .selectFrom('order_lines')
    .selectAll()
    .where('order_id', 'in', [...orderIds])
    .orderBy('sub_order_index')
    .orderBy('line_index')
    .execute();
  for (const row of rows) byOrder.get(row.order_id)?.push(row);
  return byOrder;
}
