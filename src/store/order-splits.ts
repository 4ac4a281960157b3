import type { Kysely } from 'kysely';
import type { Tenant } from '../core/caller.js';
import type { Clock } from '../lib/clock.js';
import type { Tables } from './schema.js';

/** A split order's stored plan; the JSON belongs to the split service, this module only stores it. */
export interface StoredSplit {
  id: string;
  plan: unknown;
  createdAt: number;
}

/**
 * Stores the plan unless a split with this id exists already (an earlier attempt stored it and its
 * answer was lost): then the stored one wins and is returned. One statement either way for the insert.
 */
export async function insertSplitIfAbsent(
  db: Kysely<Tables>,
  clock: Clock,
  split: { id: string; tenant: Tenant; plan: unknown },
): Promise<StoredSplit> {
  const inserted = await db
    .insertInto('order_splits')
    .values({
      id: split.id,
      account_id: split.tenant.accountId,
      mode: split.tenant.mode,
      plan: JSON.stringify(split.plan),
      created_at: clock.now(),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning(['id', 'plan', 'created_at'])
    .executeTakeFirst();
  if (inserted !== undefined) return toStoredSplit(inserted);
  const stored = await findSplit(db, split.tenant, split.id);
  if (stored === undefined) throw new Error(`split ${split.id} vanished after insert`);
  return stored;
}

/** The split with this id, only within its own account and mode. */
export async function findSplit(
  db: Kysely<Tables>,
  tenant: Tenant,
  id: string,
): Promise<StoredSplit | undefined> {
  const row = await db
    .selectFrom('order_splits')
    .select(['id', 'plan', 'created_at'])
    .where('id', '=', id)
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .executeTakeFirst();
  return row === undefined ? undefined : toStoredSplit(row);
}

function toStoredSplit(row: { id: string; plan: string; created_at: number | string }): StoredSplit {
  return { id: row.id, plan: JSON.parse(row.plan) as unknown, createdAt: Number(row.created_at) };
}
