import type { Kysely } from 'kysely';

/**
 * The sandbox wholesaler's state (docs/sandbox.md "What the sandbox keeps"): one row per tenant, its
 * customers' orders, notices, returns and documents as one JSON document, and a version for compare
 * and set, so that gateways sharing this database share one sandbox.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sandbox_tenants')
    .addColumn('tenant', 'text', (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sandbox_tenants').execute();
}
