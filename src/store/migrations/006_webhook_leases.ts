import { type Kysely, sql } from 'kysely';

/**
 * The webhook worker's per-subscription cap counts the leases held (attempts in flight): only leased rows
 * are in this index, so the count stays cheap however long the backlog or the history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_leased')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'locked_until'])
    .where(sql.ref('locked_by'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_leased').execute();
}
