import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { randomToken, TOKEN_LENGTH } from '../lib/ids.js';
import type { AccountsTable, Tables } from './schema.js';

/** The tenant everything else (keys, orders, webhooks) belongs to. */
export interface Account {
  id: string;
  name: string;
  createdAt: number;
}

export async function createAccount(
  db: Kysely<Tables>,
  clock: Clock,
  input: { name: string },
): Promise<Account> {
  const row = { id: `acct_${randomToken(TOKEN_LENGTH)}`, name: input.name, created_at: clock.now() };
  await db.insertInto('accounts').values(row).execute();
  return toAccount(row);
}

export async function findAccount(db: Kysely<Tables>, id: string): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toAccount(row);
}

export async function listAccounts(db: Kysely<Tables>): Promise<Account[]> {
  const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toAccount);
}

function toAccount(row: Selectable<AccountsTable>): Account {
  return { id: row.id, name: row.name, createdAt: Number(row.created_at) };
}
