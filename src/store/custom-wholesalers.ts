import type { Kysely, Selectable } from 'kysely';
import type { Tenant } from '../core/caller.js';
import type { KeyMode } from '../core/key-mode.js';
import type { Clock } from '../lib/clock.js';
import type { CustomWholesalersTable, Tables } from './schema.js';

/** An MSV3 endpoint registered by one account in one mode; invisible to everyone else. */
export interface CustomWholesaler {
  id: string;
  accountId: string;
  mode: KeyMode;
  name: string;
  endpoint: string;
  version: 1 | 2;
  verified: boolean;
  capabilities: string[];
  createdAt: number;
  verifiedAt: number | null;
}

/**
 * Registers the endpoint, or returns the existing registration when the same owner registers the
 * same id again (the id is derived from the endpoint, so registration is naturally idempotent).
 */
export async function upsertCustomWholesaler(
  db: Kysely<Tables>,
  clock: Clock,
  tenant: Tenant,
  input: { id: string; name: string; endpoint: string; version: 1 | 2 },
): Promise<CustomWholesaler> {
  await db
    .insertInto('custom_wholesalers')
    .values({
      id: input.id,
      account_id: tenant.accountId,
      mode: tenant.mode,
      name: input.name,
      endpoint: input.endpoint,
      version: input.version,
      verified: 0,
      capabilities: '[]',
      created_at: clock.now(),
      verified_at: null,
    })
    .onConflict((oc) => oc.columns(['account_id', 'mode', 'id']).doNothing())
    .execute();
  const saved = await findCustomWholesaler(db, tenant, input.id);
  if (saved === undefined) throw new Error(`custom wholesaler ${input.id} vanished after insert`);
  return saved;
}

export async function findCustomWholesaler(
  db: Kysely<Tables>,
  tenant: Tenant,
  id: string,
): Promise<CustomWholesaler | undefined> {
  const row = await db
    .selectFrom('custom_wholesalers')
    .selectAll()
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toCustomWholesaler(row);
}

export async function listCustomWholesalers(db: Kysely<Tables>, tenant: Tenant): Promise<CustomWholesaler[]> {
  const rows = await db
    .selectFrom('custom_wholesalers')
    .selectAll()
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toCustomWholesaler);
}

/** After a successful connection test against the registered endpoint: verified, with capabilities. */
export async function markCustomWholesalerVerified(
  db: Kysely<Tables>,
  clock: Clock,
  tenant: Tenant,
  id: string,
  capabilities: string[],
): Promise<void> {
  await db
    .updateTable('custom_wholesalers')
    .set({ verified: 1, capabilities: JSON.stringify(capabilities), verified_at: clock.now() })
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .where('id', '=', id)
    .execute();
}

/**
 * Removes the owner's registration; `false` when the owner has none with this id (another account's or
 * mode's is never touched). Orders and delivery notices naming the id are kept: they reference it by
 * value, not by key.
 */
export async function deleteCustomWholesaler(
  db: Kysely<Tables>,
  tenant: Tenant,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('custom_wholesalers')
    .where('account_id', '=', tenant.accountId)
    .where('mode', '=', tenant.mode)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

function toCustomWholesaler(row: Selectable<CustomWholesalersTable>): CustomWholesaler {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    name: row.name,
    endpoint: row.endpoint,
    version: Number(row.version) === 1 ? 1 : 2,
    verified: Number(row.verified) === 1,
    capabilities: JSON.parse(row.capabilities) as string[],
    createdAt: Number(row.created_at),
    verifiedAt: row.verified_at === null ? null : Number(row.verified_at),
  };
}
