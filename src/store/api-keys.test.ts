import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { createAccount } from './accounts.js';
import { hashApiKey, parseApiKey } from './api-key-secret.js';
import {
  countApiKeys,
  createApiKey,
  findApiKey,
  findApiKeyByHash,
  isRevoked,
  listApiKeys,
  recordApiKeyUse,
  revokeApiKey,
} from './api-keys.js';

describeEachDialect('api keys repository', (getDatabase) => {
  const clock = manualClock();
  const newAccount = () => createAccount(getDatabase().db, clock, { name: 'Apotheke' });

  it('creates a key, returns the secret once and stores only its hash', async () => {
    const { db } = getDatabase();
    const account = await newAccount();
    const { apiKey, secret } = await createApiKey(db, clock, {
      accountId: account.id,
      name: 'ci',
      mode: 'test',
    });
    expect(parseApiKey(secret)).toEqual({ mode: 'test' });
    expect(apiKey).toEqual({
      id: expect.stringMatching(/^key_/),
      accountId: account.id,
      name: 'ci',
      mode: 'test',
      prefix: secret.slice(0, 12),
      last4: secret.slice(-4),
      createdAt: clock.now(),
      lastUsedAt: null,
      revokedAt: null,
    });
    const row = await db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', apiKey.id)
      .executeTakeFirstOrThrow();
    expect(row.hash).toBe(hashApiKey(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('finds a key by the hash of its secret', async () => {
    const { db } = getDatabase();
    const account = await newAccount();
    const { apiKey, secret } = await createApiKey(db, clock, {
      accountId: account.id,
      name: 'a',
      mode: 'live',
    });
    expect(await findApiKeyByHash(db, hashApiKey(secret))).toEqual(apiKey);
    expect(await findApiKeyByHash(db, hashApiKey(`${secret}x`))).toBeUndefined();
  });

  it('refuses a key for an unknown account', async () => {
    await expect(
      createApiKey(getDatabase().db, clock, { accountId: 'acct_nobody', name: 'x', mode: 'test' }),
    ).rejects.toThrow();
  });

  it('lists keys of one account or of all, oldest first', async () => {
    const { db } = getDatabase();
    const one = await newAccount();
    const other = await newAccount();
    const first = await createApiKey(db, clock, { accountId: one.id, name: 'first', mode: 'test' });
    clock.advance(1);
    const second = await createApiKey(db, clock, { accountId: one.id, name: 'second', mode: 'live' });
    const foreign = await createApiKey(db, clock, { accountId: other.id, name: 'foreign', mode: 'test' });
    expect(await listApiKeys(db, { accountId: one.id })).toEqual([first.apiKey, second.apiKey]);
    const all = await listApiKeys(db);
    expect(all.map((k) => k.id)).toEqual(expect.arrayContaining([first.apiKey.id, foreign.apiKey.id]));
    expect(await countApiKeys(db)).toBe(all.length);
  });

  it('revokes a key once and keeps the first revocation time', async () => {
    const { db } = getDatabase();
    const account = await newAccount();
    const { apiKey } = await createApiKey(db, clock, { accountId: account.id, name: 'r', mode: 'test' });
    const revoked = await revokeApiKey(db, clock, apiKey.id);
    expect(revoked?.revokedAt).toBe(clock.now());
    const firstTime = clock.now();
    clock.advance(5000);
    expect((await revokeApiKey(db, clock, apiKey.id))?.revokedAt).toBe(firstTime);
  });

  it('schedules a revocation for a roll-over: valid until then, and an earlier time wins', async () => {
    const { db } = getDatabase();
    const account = await newAccount();
    const { apiKey } = await createApiKey(db, clock, { accountId: account.id, name: 'o', mode: 'live' });
    const later = clock.now() + 3_600_000;
    const scheduled = await revokeApiKey(db, clock, apiKey.id, later);
    expect(scheduled?.revokedAt).toBe(later);
    expect(isRevoked(scheduled!, clock.now())).toBe(false);
    expect(isRevoked(scheduled!, later)).toBe(true);
    expect((await revokeApiKey(db, clock, apiKey.id, later + 1))?.revokedAt).toBe(later);
    expect((await revokeApiKey(db, clock, apiKey.id))?.revokedAt).toBe(clock.now());
  });

  it('returns undefined when revoking an unknown key', async () => {
    expect(await revokeApiKey(getDatabase().db, clock, 'key_unknown')).toBeUndefined();
  });

  it('records use at most once per interval', async () => {
    const { db } = getDatabase();
    const account = await newAccount();
    const { apiKey } = await createApiKey(db, clock, { accountId: account.id, name: 'u', mode: 'test' });
    const t0 = 1_800_000_000_000;
    expect(await recordApiKeyUse(db, apiKey.id, t0)).toBe(true);
    expect(await recordApiKeyUse(db, apiKey.id, t0 + 59_999)).toBe(false);
    expect((await findApiKey(db, apiKey.id))?.lastUsedAt).toBe(t0);
    expect(await recordApiKeyUse(db, apiKey.id, t0 + 60_000)).toBe(true);
    expect((await findApiKey(db, apiKey.id))?.lastUsedAt).toBe(t0 + 60_000);
  });
});
