import { expect, it, vi } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { createTestDatabase, describeEachDialect } from '../../test/db.js';
import { registerProbeRoutes } from '../../test/probe-routes.js';
import { until } from '../../test/until.js';
import { manualClock } from '../lib/clock.js';
import { generateApiKey } from '../store/api-key-secret.js';
import { findApiKey, findApiKeyByHash, recordApiKeyUse, revokeApiKey } from '../store/api-keys.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../store/database-unavailable.js';
import { UNKNOWN_KEY_TTL_MS } from './auth.js';

// The real functions, counted (for the cache tests).
vi.mock('../store/api-keys.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../store/api-keys.js')>();
  return {
    ...actual,
    findApiKeyByHash: vi.fn(actual.findApiKeyByHash),
    recordApiKeyUse: vi.fn(actual.recordApiKeyUse),
  };
});

/** How often `fn` (a counted store function) was called since this call. */
function callsSince(fn: (...args: never[]) => unknown): () => number {
  const calls = vi.mocked(fn).mock.calls;
  const before = calls.length;
  return () => calls.length - before;
}

describeEachDialect('API key authentication', (getDatabase, dialect) => {
  const clock = manualClock();
  const appFor = (env?: NodeJS.ProcessEnv) =>
    buildTestApp(getDatabase(), { clock, env, extraRoutes: [registerProbeRoutes] });
  // The request does not wait for the write of the last use.
  const lastUseRecorded = (keyId: string, at: number) =>
    until(
      `last use ${at} recorded`,
      async () => (await findApiKey(getDatabase().db, keyId))?.lastUsedAt === at,
      2_000,
      5,
    );

  it('sets request.auth to the account, key and mode of a test key', async () => {
    const { app } = await appFor();
    const { secret, keyId, accountId } = await createTestKey(getDatabase(), 'test');
    const response = await app.inject({ url: '/test/whoami', headers: { 'x-api-key': secret } });
    expect(response.json()).toEqual({ accountId, keyId, mode: 'test' });
    await app.close();
  });

  it('sets mode live for a live key', async () => {
    const { app } = await appFor();
    const { secret } = await createTestKey(getDatabase(), 'live');
    const response = await app.inject({ url: '/test/whoami', headers: { 'x-api-key': secret } });
    expect(response.json().mode).toBe('live');
    await app.close();
  });

  it('refuses a well-formed key that was never issued', async () => {
    const { app } = await appFor();
    const response = await app.inject({
      url: '/v1/wholesalers',
      headers: { 'x-api-key': generateApiKey('test') },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({
      error: 'api_key_invalid',
      message: 'The API key is unknown or has been revoked.',
    });
    await app.close();
  });

  it('tells a key with one mistyped character (checksum mismatch) from text that is no key, echoing neither', async () => {
    const { app } = await appFor();
    const { secret } = await createTestKey(getDatabase(), 'test');
    const at = 12;
    const typo = secret.slice(0, at) + (secret[at] === 'a' ? 'b' : 'a') + secret.slice(at + 1);
    const swapped = secret.slice(0, at) + secret[at + 1] + secret[at] + secret.slice(at + 2);
    for (const mistyped of [typo, swapped].filter((k) => k !== secret)) {
      const response = await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': mistyped } });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({
        error: 'api_key_invalid',
        message: 'The API key has a typing error (its checksum does not match): copy it again.',
      });
      expect(response.body).not.toContain(mistyped.slice(8));
    }
    for (const junk of [
      'sk_test_abc',
      secret.slice(0, -1),
      `${secret}x`,
      secret.replace('_test_', '_prod_'),
    ]) {
      const response = await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': junk } });
      expect(response.json()).toMatchObject({
        error: 'api_key_invalid',
        message: 'The X-API-Key header is not an API key (they look like pk_test_… or pk_live_…).',
      });
      expect(response.body).not.toContain(secret.slice(8, -1));
    }
    await app.close();
  });

  it('refuses a revoked key at once (API_KEY_CACHE_TTL_MS=0)', async () => {
    const { app } = await appFor({ API_KEY_CACHE_TTL_MS: '0' });
    const { secret, keyId } = await createTestKey(getDatabase());
    expect((await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': secret } })).statusCode).toBe(
      200,
    );
    await revokeApiKey(getDatabase().db, clock, keyId);
    const response = await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': secret } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({
      error: 'api_key_invalid',
      message: 'The API key is unknown or has been revoked.',
    });
    await app.close();
  });

  it('records last use at most once a minute', async () => {
    const { app } = await appFor();
    const { secret, keyId } = await createTestKey(getDatabase());
    const call = () => app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': secret } });
    const writes = callsSince(recordApiKeyUse);
    const first = clock.now();
    await call();
    expect(writes()).toBe(1);
    await lastUseRecorded(keyId, first);
    clock.advance(30_000);
    await call();
    expect(writes()).toBe(1);
    clock.advance(30_000);
    await call();
    expect(writes()).toBe(2);
    await lastUseRecorded(keyId, first + 60_000);
    await app.close();
  });

  it('refuses a revoked key within API_KEY_CACHE_TTL_MS, without asking the database before', async () => {
    const { app } = await appFor({ API_KEY_CACHE_TTL_MS: '5000' });
    const { secret, keyId } = await createTestKey(getDatabase());
    const call = () => app.inject({ url: '/test/whoami', headers: { 'x-api-key': secret } });
    expect((await call()).statusCode).toBe(200); // looked up and remembered
    await revokeApiKey(getDatabase().db, clock, keyId); // as `keys revoke` does from another process
    clock.advance(4_999);
    expect((await call()).statusCode).toBe(200); // still the remembered record
    clock.advance(1);
    const refused = await call();
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({
      error: 'api_key_invalid',
      message: 'The API key is unknown or has been revoked.',
    });
    clock.advance(60_000);
    expect((await call()).statusCode).toBe(401); // a revoked record stays refused
    await app.close();
  });

  it('answers remembered keys without the database, and an unknown key once per UNKNOWN_KEY_TTL_MS', async () => {
    const { app } = await appFor({ API_KEY_CACHE_TTL_MS: '5000' });
    const { secret, accountId } = await createTestKey(getDatabase());
    const unknown = generateApiKey('test');
    const lookups = callsSince(findApiKeyByHash);
    const call = (key: string) => app.inject({ url: '/test/whoami', headers: { 'x-api-key': key } });
    for (let i = 0; i < 5; i++) expect((await call(secret)).json()).toMatchObject({ accountId });
    for (let i = 0; i < 3; i++) expect((await call(unknown)).statusCode).toBe(401);
    expect(lookups()).toBe(1 + 1);
    clock.advance(5_000);
    await call(secret);
    expect(lookups()).toBe(3);
    clock.advance(UNKNOWN_KEY_TTL_MS - 5_000);
    expect((await call(unknown)).statusCode).toBe(401);
    expect(lookups()).toBe(4);
    await app.close();
  });

  it('records last use at most once a minute with remembered keys too', async () => {
    const { app } = await appFor({ API_KEY_CACHE_TTL_MS: '60000' });
    const { secret, keyId } = await createTestKey(getDatabase());
    const writes = callsSince(recordApiKeyUse);
    const call = () => app.inject({ url: '/test/whoami', headers: { 'x-api-key': secret } });
    const first = clock.now();
    for (let i = 0; i < 5; i++) await call();
    clock.advance(59_999);
    await call();
    expect(writes()).toBe(1);
    clock.advance(1);
    await call();
    await call();
    expect(writes()).toBe(2);
    await lastUseRecorded(keyId, first + 60_000);
    await app.close();
  });

  it(`checks format and checksum before touching the database (${dialect})`, async () => {
    const database = await createTestDatabase(dialect);
    const { app } = await buildTestApp(database);
    const key = generateApiKey('test');
    // One character changed (never to itself, which would leave a valid key): the checksum no longer fits.
    const typo = key.slice(0, -1).concat(key.endsWith('0') ? '1' : '0');
    await database.close(); // any lookup would now fail, answered with 503
    const malformed = await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': typo } });
    const wellFormed = await app.inject({
      url: '/v1/wholesalers',
      headers: { 'x-api-key': generateApiKey('test') },
    });
    await app.close();
    await database.dispose();
    expect(malformed.statusCode).toBe(401);
    expect(wellFormed.statusCode).toBe(503);
    expect(wellFormed.json()).toMatchObject({ error: 'service_unavailable', error_code: '1901' });
    expect(wellFormed.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
  });
});
