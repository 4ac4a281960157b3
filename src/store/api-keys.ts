import { timingSafeEqual } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { KeyMode } from '../core/key-mode.js';
import type { Clock } from '../lib/clock.js';
import { randomToken, TOKEN_LENGTH } from '../lib/ids.js';
import { displayParts, generateApiKey, hashApiKey } from './api-key-secret.js';
import type { ApiKeysTable, Tables } from './schema.js';

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  mode: KeyMode;
  /** `pk_test_AbCd`: enough to recognise the key, useless to an attacker. */
  prefix: string;
  last4: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** The secret exists only here, once; only its SHA-256 is stored. */
export interface CreatedApiKey {
  apiKey: ApiKey;
  secret: string;
}

export async function createApiKey(
  db: Kysely<Tables>,
  clock: Clock,
  input: { accountId: string; name: string; mode: KeyMode },
): Promise<CreatedApiKey> {
  const secret = generateApiKey(input.mode);
  const row: Selectable<ApiKeysTable> = {
    id: `key_${randomToken(TOKEN_LENGTH)}`,
    account_id: input.accountId,
    name: input.name,
    mode: input.mode,
    hash: hashApiKey(secret),
    ...displayParts(secret),
    created_at: clock.now(),
    last_used_at: null,
    revoked_at: null,
  };
  await db.insertInto('api_keys').values(row).execute();
  return { apiKey: toApiKey(row), secret };
}

/**
 * The key whose SHA-256 is `hash`, revoked or not. The index lookup compares hashes, not secrets;
 * the constant-time comparison on top guards against a store that matches loosely.
 */
export async function findApiKeyByHash(db: Kysely<Tables>, hash: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
  if (row === undefined) return undefined;
  const wanted = Buffer.from(hash, 'hex');
  const found = Buffer.from(row.hash, 'hex');
  if (wanted.length !== found.length || !timingSafeEqual(wanted, found)) return undefined;
  return toApiKey(row);
}

export async function findApiKey(db: Kysely<Tables>, id: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toApiKey(row);
}

export async function listApiKeys(
  db: Kysely<Tables>,
  filter: { accountId?: string } = {},
): Promise<ApiKey[]> {
  let query = db.selectFrom('api_keys').selectAll();
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  return rows.map(toApiKey);
}

export async function countApiKeys(db: Kysely<Tables>): Promise<number> {
  const { count } = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** How many keys are usable at `now`, by mode, and how many are revoked (for the start-up lines). */
export async function countApiKeysByState(
  db: Kysely<Tables>,
  now: number,
): Promise<{ test: number; live: number; revoked: number }> {
  const usable = await db
    .selectFrom('api_keys')
    .select((eb) => ['mode', eb.fn.countAll<number>().as('count')])
    .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', now)]))
    .groupBy('mode')
    .execute();
  const { revoked } = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('revoked'))
    .where('revoked_at', '<=', now)
    .executeTakeFirstOrThrow();
  const usableIn = (mode: KeyMode) => Number(usable.find((row) => row.mode === mode)?.count ?? 0);
  return { test: usableIn('test'), live: usableIn('live'), revoked: Number(revoked) };
}

/**
 * Revokes the key at `at` (default: now; a later time leaves it valid until then, as `keys roll` does).
 * A key already revoked, or due to be, keeps the earlier time. `undefined` if there is no such key.
 */
export async function revokeApiKey(
  db: Kysely<Tables>,
  clock: Clock,
  id: string,
  at: number = clock.now(),
): Promise<ApiKey | undefined> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', at)]))
    .execute();
  return findApiKey(db, id);
}

/** Whether the key is refused at `now`: revoked, or past the end of its roll-over overlap. */
export function isRevoked(key: Pick<ApiKey, 'revokedAt'>, now: number): boolean {
  return key.revokedAt !== null && key.revokedAt <= now;
}

/**
 * Records use at `at`, but writes only when the stored time is older than `minIntervalMs`, so a busy
 * key costs at most one write per interval across all gateway instances. Returns whether it wrote.
 */
export async function recordApiKeyUse(
  db: Kysely<Tables>,
  id: string,
  at: number,
  minIntervalMs = 60_000,
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', at - minIntervalMs)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

function toApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    mode: row.mode,
    prefix: row.prefix,
    last4: row.last4,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
