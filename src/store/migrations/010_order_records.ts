import { type Kysely, sql } from 'kysely';

/**
 * The order record (docs/orders.md "The order record"): one row per ordered line with what was
 * confirmed, delivered and short; the delivery-note parts credited to each line; the order's status
 * history; and on the order itself its placement status and when it was fulfilled. Orders stored
 * before this migration get their lines from their stored request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('orders').addColumn('placement_status', 'text').execute();
  await db.schema.alterTable('orders').addColumn('fulfilled_at', 'bigint').execute();
  await sql`update orders set placement_status = case state
      when 'sending' then 'outcome_unknown' when 'unknown' then 'outcome_unknown' else state end`.execute(db);
  // Newest first per account and mode: the listing.
  await db.schema
    .createIndex('orders_listing')
    .on('orders')
    .columns(['account_id', 'mode', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('order_lines')
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('sub_order_id', 'text', (c) => c.notNull())
    .addColumn('pzn', 'text', (c) => c.notNull())
    .addColumn('sub_order_index', 'integer', (c) => c.notNull())
    .addColumn('line_index', 'integer', (c) => c.notNull())
    .addColumn('order_type', 'text', (c) => c.notNull())
    .addColumn('order_label', 'text', (c) => c.notNull())
    .addColumn('quantity_ordered', 'integer', (c) => c.notNull())
    .addColumn('quantity_confirmed', 'integer')
    .addColumn('returned_label', 'text')
    .addColumn('substitute_pzn', 'text')
    .addColumn('quantity_delivered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('quantity_short', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('order_lines_pk', ['order_id', 'sub_order_id', 'pzn'])
    .execute();
  // A delivery notice names the sub-order (`AuftragsID`) of a part: found by it, or by PZN for filters.
  await db.schema.createIndex('order_lines_sub_order').on('order_lines').columns(['sub_order_id']).execute();
  await db.schema.createIndex('order_lines_pzn').on('order_lines').columns(['pzn', 'order_id']).execute();

  await db.schema
    .createTable('order_fills')
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('sub_order_id', 'text', (c) => c.notNull())
    .addColumn('pzn', 'text', (c) => c.notNull())
    .addColumn('tracking_number', 'text', (c) => c.notNull())
    .addColumn('note_line', 'integer', (c) => c.notNull())
    .addColumn('part', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('delivered', 'short')`))
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('delivered_pzn', 'text', (c) => c.notNull())
    .addColumn('batch', 'text')
    .addColumn('expiry_date', 'text')
    .addColumn('parcel_number', 'text')
    .addColumn('document_date', 'text', (c) => c.notNull())
    .addColumn('inferred', 'integer', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('order_fills_pk', ['order_id', 'tracking_number', 'note_line', 'part', 'kind'])
    .execute();

  await db.schema
    .createTable('order_history')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('placement_status', 'text', (c) => c.notNull())
    .addColumn('status', 'text')
    .execute();
  await db.schema
    .createIndex('order_history_order')
    .on('order_history')
    .columns(['order_id', 'at'])
    .execute();

  await backfillLines(db as Kysely<OldOrders>);
}

interface OldOrders {
  orders: { id: string; request: string; answer: string | null; state: string };
  order_lines: Record<string, unknown>;
}

/** Lines of the orders stored before: one NORMAL sub-order each (`subOrder` beside `lines`). */
async function backfillLines(db: Kysely<OldOrders>): Promise<void> {
  const rows = await db.selectFrom('orders').select(['id', 'request', 'answer', 'state']).execute();
  for (const row of rows) {
    const request = JSON.parse(row.request) as {
      subOrder: { id: string; orderLabel: string };
      lines: { pzn: string; quantity: number }[];
    };
    const answer = (row.answer === null ? [] : JSON.parse(row.answer)) as {
      id: string;
      positions: { pzn: string; parts: { type: string; quantity: number | null }[] }[];
    }[];
    const answered = answer.find((sub) => sub.id === request.subOrder.id);
    const values = request.lines.map((line, index) => ({
      order_id: row.id,
      sub_order_id: request.subOrder.id,
      pzn: line.pzn,
      sub_order_index: 0,
      line_index: index,
      order_type: 'NORMAL',
      order_label: request.subOrder.orderLabel,
      quantity_ordered: line.quantity,
      quantity_confirmed:
        answered === undefined
          ? null
          : (answered.positions
              .find((p) => p.pzn === line.pzn)
              ?.parts.filter((part) => DELIVERING.has(part.type))
              .reduce((sum, part) => sum + (part.quantity ?? 0), 0) ?? 0),
      returned_label:
        answered === undefined ? null : ((answered as { orderLabel?: string }).orderLabel ?? null),
      substitute_pzn: null,
      quantity_delivered: 0,
      quantity_short: 0,
    }));
    if (values.length > 0) await db.insertInto('order_lines').values(values).execute();
  }
}

/** Part types that deliver (services/orders/view.ts), as the orders of that time were summed. */
const DELIVERING = new Set(['Normal', 'Verbund', 'Nachlieferung', 'Dispo']);

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('order_history').execute();
  await db.schema.dropTable('order_fills').execute();
  await db.schema.dropTable('order_lines').execute();
  await db.schema.dropIndex('orders_listing').execute();
  await db.schema.alterTable('orders').dropColumn('fulfilled_at').execute();
  await db.schema.alterTable('orders').dropColumn('placement_status').execute();
}
