import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('custom_wholesalers')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'live')`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('capabilities', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('verified_at', 'bigint')
    .addPrimaryKeyConstraint('custom_wholesalers_pk', ['account_id', 'mode', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('custom_wholesalers').execute();
}
