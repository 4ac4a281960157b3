import type { Kysely } from 'kysely';

/**
 * The events feed (`GET /v1/events`) reads one account's events in one mode, newest first, a page after
 * a cursor: this index serves that order and the cursor's `(created_at, id)` comparison directly.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_events_feed')
    .on('webhook_events')
    .columns(['account_id', 'mode', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_events_feed').execute();
}
