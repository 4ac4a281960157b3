import { expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { createTestDatabase, describeEachDialect } from '../../test/db.js';
import { registerProbeRoutes } from '../../test/probe-routes.js';
import { manualClock } from '../lib/clock.js';
import { generateApiKey } from '../store/api-key-secret.js';
import { findApiKey, revokeApiKey } from '../store/api-keys.js';

describeEachDialect('API key authentication', (getDatabase, dialect) => {
  const clock = manualClock();
  const appFor = () => buildTestApp(getDatabase(), { clock, extraRoutes: [registerProbeRoutes] });

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
    expect(response.json()).toMatchObject({ error: 'api_key_invalid', message: 'The API key is not known.' });
    await app.close();
  });

  it('refuses a revoked key at once', async () => {
    const { app } = await appFor();
    const { secret, keyId } = await createTestKey(getDatabase());
    expect((await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': secret } })).statusCode).toBe(
      200,
    );
    await revokeApiKey(getDatabase().db, clock, keyId);
    const response = await app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': secret } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({
      error: 'api_key_invalid',
      message: 'The API key has been revoked.',
    });
    await app.close();
  });

  it('records last use at most once a minute', async () => {
    const { app } = await appFor();
    const { secret, keyId } = await createTestKey(getDatabase());
    const call = () => app.inject({ url: '/v1/wholesalers', headers: { 'x-api-key': secret } });
    const lastUsed = async () => {
      await new Promise((resolve) => setTimeout(resolve, 20)); // the write is not awaited by the request
      return (await findApiKey(getDatabase().db, keyId))?.lastUsedAt;
    };
    const first = clock.now();
    await call();
    expect(await lastUsed()).toBe(first);
    clock.advance(30_000);
    await call();
    expect(await lastUsed()).toBe(first);
    clock.advance(30_000);
    await call();
    expect(await lastUsed()).toBe(first + 60_000);
    await app.close();
  });

  it(`checks format and checksum before touching the database (${dialect})`, async () => {
    const database = await createTestDatabase(dialect);
    const { app } = await buildTestApp(database);
    const typo = generateApiKey('test').slice(0, -1).concat('0');
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
    expect(wellFormed.headers['retry-after']).toBe('1');
  });
});
