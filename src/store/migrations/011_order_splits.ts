import type { Kysely } from 'kysely';

/**
 * Split orders (docs/split-orders.md): the plan of one split, stored before any wholesaler's order is
 * placed, so that a retry with the same Idempotency-Key finishes it instead of planning again. The row's
 * id derives from the key; the plan names each wholesaler's order by the ids it will be placed with. No
 * credential is stored: per wholesaler only the MSV3 user name, as `orders.customer_id` keeps it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('order_splits')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('order_splits').execute();
}
