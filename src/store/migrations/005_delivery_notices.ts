import { type Kysely, sql } from 'kysely';

/**
 * Every delivery notice the gateway has seen, per pharmacy: MSV3 has no history listing
 * (docs/msv3.md "Delivery history"), so `GET /v1/deliveries/history` without a filter answers from here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('delivery_notices')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'live')`))
    .addColumn('wholesaler', 'text', (c) => c.notNull())
    .addColumn('customer_hash', 'text', (c) => c.notNull())
    .addColumn('tracking_number', 'text', (c) => c.notNull())
    .addColumn('barcode', 'text', (c) => c.notNull())
    .addColumn('document_date', 'text', (c) => c.notNull())
    .addColumn('document_id', 'text')
    .addColumn('notice', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('confirmed_at', 'bigint')
    .addPrimaryKeyConstraint('delivery_notices_pk', [
      'account_id',
      'mode',
      'wholesaler',
      'customer_hash',
      'tracking_number',
    ])
    .execute();

  // The history listing: newest document date first, tracking number as the tie-breaker.
  await db.schema
    .createIndex('delivery_notices_history')
    .on('delivery_notices')
    .columns(['account_id', 'mode', 'wholesaler', 'customer_hash', 'document_date', 'tracking_number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('delivery_notices').execute();
}
