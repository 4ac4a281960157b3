import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { randomToken, TOKEN_LENGTH } from '../lib/ids.js';
import type { IdempotencyKeysTable } from './idempotency-table.js';
import type { Tables } from './schema.js';

/**
 * The idempotency records behind `Idempotency-Key` (see `http/idempotency.ts` for the rules). Every
 * transition is one conditional statement, so any number of gateway processes sharing the database agree:
 * the primary key decides who claims a new key, and the lock token decides who may finish or take over.
 */

/** One key of one API key. `keyHash` is the SHA-256 of the client's key. */
export interface IdempotencyScope {
  apiKeyId: string;
  accountId: string;
  keyHash: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimResult =
  /** This execution holds the key. `attempt` > 1: an earlier execution did not finish (crash, open outcome). */
  | { kind: 'claimed'; lockToken: string; attempt: number; firstUsedAt: number }
  | { kind: 'replay'; response: StoredResponse; originalRequestId: string }
  | { kind: 'mismatch' }
  | { kind: 'in_progress'; lockedUntil: number };

export interface ClaimInput {
  scope: IdempotencyScope;
  fingerprint: string;
  requestId: string;
  /** How long the lock holds without a heartbeat. */
  lockMs: number;
  /** How long the record (and so the replay) lives: 24 h. */
  ttlMs: number;
}

/** Claims the key for this execution, or says why not (stored outcome, other request, still running). */
export async function claimIdempotencyKey(
  db: Kysely<Tables>,
  clock: Clock,
  input: ClaimInput,
): Promise<ClaimResult> {
  const { scope } = input;
  // A few rounds at most: each retry follows a concurrent change (a purge, a takeover) by someone else.
  for (let round = 0; round < 5; round++) {
    const now = clock.now();
    const lockToken = randomToken(TOKEN_LENGTH);
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        api_key_id: scope.apiKeyId,
        key_hash: scope.keyHash,
        account_id: scope.accountId,
        fingerprint: input.fingerprint,
        request_id: input.requestId,
        attempts: 1,
        lock_token: lockToken,
        locked_until: now + input.lockMs,
        response_status: null,
        response_headers: null,
        response_body: null,
        created_at: now,
        completed_at: null,
        expires_at: now + input.ttlMs,
      })
      .onConflict((oc) => oc.columns(['api_key_id', 'key_hash']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) {
      return { kind: 'claimed', lockToken, attempt: 1, firstUsedAt: now };
    }

    const row = await findIdempotencyRecord(db, scope);
    if (row === undefined) continue; // purged between our insert and this read
    const lockedUntil = Number(row.locked_until);
    if (Number(row.expires_at) <= now && lockedUntil <= now) {
      // Expired: the key may start a new request. Delete lazily (the periodic purge may not have run yet).
      await deleteWhere(db, scope, Number(row.expires_at));
      continue;
    }
    if (row.fingerprint !== input.fingerprint) return { kind: 'mismatch' };
    if (row.response_status !== null) {
      return {
        kind: 'replay',
        originalRequestId: row.request_id,
        response: {
          status: Number(row.response_status),
          headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>,
          body: row.response_body ?? '',
        },
      };
    }
    if (lockedUntil > now) return { kind: 'in_progress', lockedUntil };

    // Abandoned (its holder crashed) or reopened (its outcome is open): take over, unless someone else is faster.
    const taken = await db
      .updateTable('idempotency_keys')
      .set({ lock_token: lockToken, locked_until: now + input.lockMs, attempts: Number(row.attempts) + 1 })
      .where('api_key_id', '=', scope.apiKeyId)
      .where('key_hash', '=', scope.keyHash)
      .where('locked_until', '=', lockedUntil)
      .where('lock_token', row.lock_token === null ? 'is' : '=', row.lock_token)
      .where('response_status', 'is', null)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) === 1) {
      return {
        kind: 'claimed',
        lockToken,
        attempt: Number(row.attempts) + 1,
        firstUsedAt: Number(row.created_at),
      };
    }
  }
  throw new Error('idempotency key claim did not settle after 5 rounds');
}

/** Stores the outcome for replays and unlocks. False when the lock was lost (another execution took over). */
export async function completeIdempotencyKey(
  db: Kysely<Tables>,
  clock: Clock,
  scope: IdempotencyScope,
  lockToken: string,
  response: StoredResponse,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: response.body,
      completed_at: clock.now(),
      lock_token: null,
      locked_until: 0,
    })
    .where('api_key_id', '=', scope.apiKeyId)
    .where('key_hash', '=', scope.keyHash)
    .where('lock_token', '=', lockToken)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Forgets the key: nothing happened, so the next request with it starts afresh (any body). */
export async function releaseIdempotencyKey(
  db: Kysely<Tables>,
  scope: IdempotencyScope,
  lockToken: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', scope.apiKeyId)
    .where('key_hash', '=', scope.keyHash)
    .where('lock_token', '=', lockToken)
    .execute();
}

/**
 * Unlocks without storing: the outcome is open, so the next request with the key (the same request, or
 * 422) takes over at once and finishes the work, with `attempt` > 1 and the same `firstUsedAt`.
 */
export async function reopenIdempotencyKey(
  db: Kysely<Tables>,
  scope: IdempotencyScope,
  lockToken: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ lock_token: null, locked_until: 0 })
    .where('api_key_id', '=', scope.apiKeyId)
    .where('key_hash', '=', scope.keyHash)
    .where('lock_token', '=', lockToken)
    .execute();
}

/** Heartbeat of a running execution. False when the lock was lost. */
export async function extendIdempotencyLock(
  db: Kysely<Tables>,
  clock: Clock,
  scope: IdempotencyScope,
  lockToken: string,
  lockMs: number,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ locked_until: clock.now() + lockMs })
    .where('api_key_id', '=', scope.apiKeyId)
    .where('key_hash', '=', scope.keyHash)
    .where('lock_token', '=', lockToken)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes every expired record that nobody holds; returns how many. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<Tables>, clock: Clock): Promise<number> {
  const now = clock.now();
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', now)
    .where('locked_until', '<=', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The raw record (tests and support). */
export function findIdempotencyRecord(
  db: Kysely<Tables>,
  scope: Pick<IdempotencyScope, 'apiKeyId' | 'keyHash'>,
): Promise<Selectable<IdempotencyKeysTable> | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', scope.apiKeyId)
    .where('key_hash', '=', scope.keyHash)
    .executeTakeFirst();
}

async function deleteWhere(db: Kysely<Tables>, scope: IdempotencyScope, expiresAt: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', scope.apiKeyId)
    .where('key_hash', '=', scope.keyHash)
    .where('expires_at', '=', expiresAt)
    .execute();
}
