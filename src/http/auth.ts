import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { hashApiKey, parseApiKey } from '../store/api-key-secret.js';
import { type ApiKey, findApiKeyByHash, isRevoked, recordApiKeyUse } from '../store/api-keys.js';
import type { Tables } from '../store/schema.js';
import { databaseUnavailable } from './database-errors.js';
import { ApiError } from './errors.js';
import type { GatewayApp } from './types.js';

const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys remembered at most; the oldest entry goes first. */
const CACHE_MAX_KEYS = 10_000;

export interface AuthDeps {
  db: Kysely<Tables>;
  clock: Clock;
  /**
   * API_KEY_CACHE_TTL_MS: how long a looked-up key is reused without asking the database (0: never).
   * Revocation (`keys revoke`, another process) is seen within this time.
   */
  cacheTtlMs?: number;
}

/**
 * Resolves X-API-Key to `request.auth` on every route that is not public. The format and checksum
 * are checked before the database is asked; the stored SHA-256 is looked up, never the key. Keys found
 * (revoked or not) are remembered by hash for `cacheTtlMs`; unknown keys are never remembered.
 */
export function installAuth(app: GatewayApp, deps: AuthDeps): void {
  const cache = createApiKeyCache(deps.clock, deps.cacheTtlMs ?? 0);
  app.decorateRequest('auth', null as never);
  app.addHook('onRequest', async (request) => {
    if (request.is404 || request.routeOptions.config.public) return;
    const presented = request.headers['x-api-key'];
    if (presented === undefined || presented === '') {
      throw new ApiError('api_key_missing', 'Send your API key in the X-API-Key header.');
    }
    if (typeof presented !== 'string' || parseApiKey(presented) === undefined) {
      throw new ApiError(
        'api_key_invalid',
        'The X-API-Key header is not a well-formed key (pk_test_… or pk_live_…).',
      );
    }
    const hash = hashApiKey(presented);
    let key = cache.get(hash);
    if (key === undefined) {
      // The lookup is the only thing here that can fail: whatever it throws, the database is the cause.
      key = await findApiKeyByHash(deps.db, hash).catch((cause: unknown) => {
        throw databaseUnavailable(cause, 'API keys cannot be checked right now; retry shortly.');
      });
      if (key === undefined) throw new ApiError('api_key_invalid', 'The API key is not known.');
      key = cache.set(hash, key);
    }
    if (isRevoked(key, deps.clock.now()))
      throw new ApiError('api_key_invalid', 'The API key has been revoked.');
    request.auth = { accountId: key.accountId, keyId: key.id, mode: key.mode };

    const now = deps.clock.now();
    if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      // The cached record remembers the write, so a cached key writes at most once a minute too.
      key.lastUsedAt = now;
      recordApiKeyUse(deps.db, key.id, now, LAST_USED_RESOLUTION_MS).catch((err: unknown) =>
        request.log.warn({ err }, 'could not record API key use'),
      );
    }
  });
}

interface ApiKeyCache {
  /** A private, mutable copy of the record, or undefined when absent or older than the TTL. */
  get(hash: string): ApiKey | undefined;
  /** Remembers a copy of `key` and returns the record to use (the copy, or `key` without caching). */
  set(hash: string, key: ApiKey): ApiKey;
}

/** Found keys by SHA-256 for `ttlMs` (a no-op cache when 0), at most CACHE_MAX_KEYS. */
export function createApiKeyCache(clock: Clock, ttlMs: number): ApiKeyCache {
  if (ttlMs <= 0) return { get: () => undefined, set: (_hash, key) => key };
  const entries = new Map<string, { key: ApiKey; expiresAt: number }>();
  return {
    get(hash) {
      const entry = entries.get(hash);
      if (entry === undefined) return undefined;
      if (clock.now() >= entry.expiresAt) {
        entries.delete(hash);
        return undefined;
      }
      return entry.key;
    },
    set(hash, key) {
      entries.delete(hash);
      if (entries.size >= CACHE_MAX_KEYS) entries.delete(entries.keys().next().value as string);
      const copy = { ...key };
      entries.set(hash, { key: copy, expiresAt: clock.now() + ttlMs });
      return copy;
    },
  };
}
