import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayParts, generateApiKey, hashApiKey, parseApiKey } from './api-key-secret.js';

describe('API key secrets', () => {
  it('creates keys with the mode prefix, 30 random and 6 checksum base62 characters', () => {
    expect(generateApiKey('test')).toMatch(/^pk_test_[0-9A-Za-z]{36}$/);
    expect(generateApiKey('live')).toMatch(/^pk_live_[0-9A-Za-z]{36}$/);
  });

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey('test')));
    expect(keys.size).toBe(1000);
  });

  it('accepts its own keys and reads their mode', () => {
    expect(parseApiKey(generateApiKey('test'))).toEqual({ mode: 'test' });
    expect(parseApiKey(generateApiKey('live'))).toEqual({ mode: 'live' });
  });

  it('rejects malformed text before any lookup', () => {
    for (const text of [
      '',
      'pk_test_',
      'sk_test_abc',
      `pk_prod_${'a'.repeat(36)}`,
      `pk_test_${'a'.repeat(35)}`,
      `pk_test_${'-'.repeat(36)}`,
    ]) {
      expect(parseApiKey(text)).toBeUndefined();
    }
  });

  it('rejects a key with any single character changed (checksum)', () => {
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    fc.assert(
      fc.property(fc.integer({ min: 8, max: 43 }), fc.integer({ min: 1, max: 61 }), (position, shift) => {
        const key = generateApiKey('live');
        const changed = alphabet[(alphabet.indexOf(key[position]!) + shift) % 62]!;
        const typo = key.slice(0, position) + changed + key.slice(position + 1);
        expect(parseApiKey(typo)).toBeUndefined();
      }),
    );
  });

  it('rejects a test key relabelled as live (the prefix is under the checksum)', () => {
    const key = generateApiKey('test');
    expect(parseApiKey(key.replace('pk_test_', 'pk_live_'))).toBeUndefined();
  });

  it('hashes with SHA-256 hex', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('shows only the prefix with four characters and the last four', () => {
    const key = generateApiKey('test');
    expect(displayParts(key)).toEqual({ prefix: key.slice(0, 12), last4: key.slice(-4) });
    expect(displayParts(key).prefix).toMatch(/^pk_test_[0-9A-Za-z]{4}$/);
  });
});
