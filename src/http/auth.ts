import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { ApiError } from '../core/errors.js';
import type { Clock } from '../lib/clock.js';
import type { RateLimiter } from '../ratelimit/rate-limiter.js';
import { apiKeyProblem, hashApiKey } from '../store/api-key-secret.js';
import { type ApiKey, findApiKeyByHash, isRevoked, recordApiKeyUse } from '../store/api-keys.js';
import { databaseUnavailable } from '../store/database-unavailable.js';
import type { Tables } from '../store/schema.js';
import { createApiKeyCache, createHashSet } from './api-key-cache.js';
import { failureCounterKey, tooManyFailures } from './auth-failures.js';
import type { GatewayApp } from './types.js';

const LAST_USED_RESOLUTION_MS = 60_000;
/**
 * How long a process answers a key the database did not know without asking again. Keys are random
 * (30 base62 characters), so one that was unknown a minute ago is not suddenly issued.
 */
export const UNKNOWN_KEY_TTL_MS = 60_000;

export interface AuthDeps {
  db: Kysely<Tables>;
  clock: Clock;
  /**
   * API_KEY_CACHE_TTL_MS: how long a looked-up key is reused without asking the database (0: never).
   * Revocation (`keys revoke`, another process) is seen within this time.
   */
  cacheTtlMs?: number;
  /** Counts failed attempts per client address in its `auth_failures` budget. */
  rateLimiter: RateLimiter;
}

/** One answer for every key that does not authenticate, so callers cannot tell revoked from unknown. */
const KEY_REFUSED = 'The API key is unknown or has been revoked.';

/** Keys that cannot be real, told apart by their checksum; neither message shows the key. */
const MALFORMED_KEY = {
  typing_error: 'The API key has a typing error (its checksum does not match): copy it again.',
  not_a_key: 'The X-API-Key header is not an API key (they look like pk_test_… or pk_live_…).',
} as const;

/**
 * Resolves X-API-Key to `request.auth` on every route that is not public. The format and checksum
 * are checked before the database is asked; the stored SHA-256 is looked up, never the key. Keys found
 * (revoked or not) are remembered by hash for `cacheTtlMs`, unknown ones for UNKNOWN_KEY_TTL_MS.
 *
 * Failed attempts (unknown or revoked keys) are counted per client address (docs/security.md). Once an
 * address has used up its budget, every failure from it is answered 429, and a key this process has not
 * seen authenticate is not looked up at all until the window ends: a flood of random keys costs no
 * database lookups beyond the budget. Keys that authenticate are not counted and keep working.
 */
export function installAuth(app: GatewayApp, deps: AuthDeps): void {
  const cache = createApiKeyCache(deps.clock, deps.cacheTtlMs ?? 0);
  const unknownKeys = createHashSet(deps.clock, UNKNOWN_KEY_TTL_MS);
  /** Keys that authenticated in this process: looked up even from an address over its budget. */
  const knownKeys = createHashSet(deps.clock);

  async function lookUp(hash: string, client: string): Promise<ApiKey | undefined> {
    const cached = cache.get(hash);
    if (cached !== undefined) return cached;
    if (unknownKeys.has(hash)) return undefined;
    if (!knownKeys.has(hash)) {
      const failures = await deps.rateLimiter.peek(client, 'auth_failures');
      if (!failures.allowed) throw tooManyFailures(failures);
    }
    // The lookup is the only thing here that can fail: whatever it throws, the database is the cause.
    const found = await findApiKeyByHash(deps.db, hash).catch((cause: unknown) => {
      throw databaseUnavailable(cause, 'API keys cannot be checked right now; retry shortly.');
    });
    if (found === undefined) unknownKeys.add(hash);
    if (found !== undefined && !isRevoked(found, deps.clock.now())) knownKeys.add(hash);
    else knownKeys.delete(hash);
    return found === undefined ? undefined : cache.set(hash, found);
  }

  async function refuse(client: string): Promise<never> {
    const failures = await deps.rateLimiter.consume(client, 'auth_failures');
    throw failures.allowed ? new ApiError('api_key_invalid', KEY_REFUSED) : tooManyFailures(failures);
  }

  /** A key that authenticates: the request is the key's, and its use is noted (once a minute). */
  function admit(request: FastifyRequest, key: ApiKey): void {
    request.auth = { accountId: key.accountId, keyId: key.id, mode: key.mode };
    const now = deps.clock.now();
    if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      // The cached record remembers the write, so a cached key writes at most once a minute too.
      key.lastUsedAt = now;
      recordApiKeyUse(deps.db, key.id, now, LAST_USED_RESOLUTION_MS).catch((err: unknown) =>
        request.log.warn({ err }, 'could not record API key use'),
      );
    }
  }

  app.decorateRequest('auth', null as never);
  // A callback hook: a key in the cache is admitted without a promise or a microtask hop.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.is404 || request.routeOptions.config.public) return done();
    const presented = request.headers['x-api-key'];
    if (presented === undefined || presented === '') {
      throw new ApiError('api_key_missing', 'Send your API key in the X-API-Key header.');
    }
    // Malformed keys cost nothing (no lookup) and cannot be guessed into valid ones: not counted.
    const problem = typeof presented === 'string' ? apiKeyProblem(presented) : 'not_a_key';
    if (typeof presented !== 'string' || problem !== undefined) {
      throw new ApiError('api_key_invalid', MALFORMED_KEY[problem ?? 'not_a_key']);
    }
    const client = failureCounterKey(request.ip);
    const hash = hashApiKey(presented);
    // A rolled key (`keys roll`) stays valid until its scheduled revocation.
    const cached = cache.get(hash);
    if (cached !== undefined && !isRevoked(cached, deps.clock.now())) {
      admit(request, cached);
      return done();
    }
    lookUp(hash, client)
      .then((key) => {
        if (key === undefined || isRevoked(key, deps.clock.now())) return refuse(client);
        admit(request, key);
      })
      .then(() => done(), done);
  });
}
