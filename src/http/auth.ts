import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import { hashApiKey, parseApiKey } from '../store/api-key-secret.js';
import { findApiKeyByHash, recordApiKeyUse } from '../store/api-keys.js';
import type { Tables } from '../store/schema.js';
import { ApiError } from './errors.js';
import type { GatewayApp } from './types.js';

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves X-API-Key to `request.auth` on every route that is not public. The format and checksum
 * are checked before the database is asked; the stored SHA-256 is looked up, never the key.
 */
export function installAuth(app: GatewayApp, deps: { db: Kysely<Tables>; clock: Clock }): void {
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
    const key = await findApiKeyByHash(deps.db, hashApiKey(presented)).catch((cause: unknown) => {
      throw new ApiError('service_unavailable', 'API keys cannot be checked right now; retry shortly.', {
        retryAfter: 1,
        cause,
      });
    });
    if (key === undefined) throw new ApiError('api_key_invalid', 'The API key is not known.');
    if (key.revokedAt !== null) throw new ApiError('api_key_invalid', 'The API key has been revoked.');
    request.auth = { accountId: key.accountId, keyId: key.id, mode: key.mode };

    const now = deps.clock.now();
    if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      recordApiKeyUse(deps.db, key.id, now, LAST_USED_RESOLUTION_MS).catch((err: unknown) =>
        request.log.warn({ err }, 'could not record API key use'),
      );
    }
  });
}
