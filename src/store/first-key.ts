import { type Kysely, sql } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { createAccount } from './accounts.js';
import { countApiKeys, createApiKey } from './api-keys.js';
import type { Database } from './database.js';
import type { Tables } from './schema.js';

/** Any constant shared by every gateway process; it names the first-start lock on PostgreSQL. */
const FIRST_KEY_LOCK = 4_711_003;

/**
 * On a database without any API key, creates a default account and a test key, exactly once however
 * many processes start at the same moment: the count and the creation run in one transaction that
 * first takes a database-wide write lock (an advisory lock on PostgreSQL; on SQLite a write, which
 * takes the database's RESERVED lock, so a second process waits in its busy timeout and then sees
 * the key). `undefined` when a key exists already.
 */
export async function createFirstKeyOnce(
  database: Database,
  clock: Clock,
): Promise<{ accountId: string; secret: string } | undefined> {
  return database.db.transaction().execute(async (trx) => {
    await takeWriteLock(trx, database.dialect);
    if ((await countApiKeys(trx)) > 0) return undefined;
    const account = await createAccount(trx, clock, { name: 'Default account' });
    const { secret } = await createApiKey(trx, clock, {
      accountId: account.id,
      name: 'first key',
      mode: 'test',
    });
    return { accountId: account.id, secret };
  });
}

async function takeWriteLock(trx: Kysely<Tables>, dialect: Database['dialect']): Promise<void> {
  if (dialect === 'postgres') {
    await sql`select pg_advisory_xact_lock(${FIRST_KEY_LOCK})`.execute(trx);
  } else {
    // Writes no row, but makes this transaction SQLite's one writer until it ends.
    await sql`update api_keys set name = name where 1 = 0`.execute(trx);
  }
}
