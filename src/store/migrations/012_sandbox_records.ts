import type { Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * The sandbox wholesaler's records (docs/sandbox.md "What the sandbox keeps"): one row per order,
 * delivery notice, document, return announcement, booked return and take-back offer of a tenant's
 * customer, so that a request writes what it changed instead of the tenant's whole history.
 * `sandbox_tenants.document` keeps the rest (counters, customers' pending orders). `seq` rises with
 * every insert: records load in the order they were first stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = dialectOf(db) === 'postgres';
  await db.schema
    .createTable('sandbox_records')
    .addColumn('seq', postgres ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addUniqueConstraint('sandbox_records_record', ['tenant', 'customer_id', 'kind', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sandbox_records').execute();
}
