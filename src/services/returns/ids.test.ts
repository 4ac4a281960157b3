import { describe, expect, it } from 'vitest';
import { UUID_PATTERN } from '../../msv3/model.js';
import { requestIdFor } from './ids.js';

const scope = {
  accountId: 'acct_1',
  keyId: 'key_1',
  mode: 'test' as const,
  idempotencyKey: 'return-42',
  firstUsedAt: 1_700_000_000_000,
};

describe('requestIdFor', () => {
  it('derives the same uuid and support id from the same Idempotency-Key', () => {
    const first = requestIdFor('retourenavisAnkuendigen', scope);
    expect(first.id).toMatch(UUID_PATTERN);
    expect(first.supportId).toBeGreaterThanOrEqual(1);
    expect(first.supportId).toBeLessThanOrEqual(999_999);
    expect(requestIdFor('retourenavisAnkuendigen', { ...scope })).toEqual(first);
  });

  it('differs per operation, key, API key and first use', () => {
    const base = requestIdFor('retourenavisAnkuendigen', scope).id;
    expect(requestIdFor('retourenavisAnfragen', scope).id).not.toBe(base);
    expect(requestIdFor('ruecknahmeangebotAnfordern', scope).id).not.toBe(base);
    expect(requestIdFor('retourenavisAnkuendigen', { ...scope, idempotencyKey: 'return-43' }).id).not.toBe(
      base,
    );
    expect(requestIdFor('retourenavisAnkuendigen', { ...scope, keyId: 'key_2' }).id).not.toBe(base);
    expect(requestIdFor('retourenavisAnkuendigen', { ...scope, firstUsedAt: 1 }).id).not.toBe(base);
  });

  it('is fresh every time without a key', () => {
    const a = requestIdFor('retourenavisAnkuendigen', undefined);
    const b = requestIdFor('retourenavisAnkuendigen', undefined);
    expect(a.id).toMatch(UUID_PATTERN);
    expect(a.id).not.toBe(b.id);
  });
});
