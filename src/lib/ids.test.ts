import { describe, expect, it } from 'vitest';
import { newRequestId, randomToken, TOKEN_LENGTH } from './ids.js';

describe('randomToken', () => {
  it('gives base62 text of the asked length, never twice the same', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const token = randomToken(TOKEN_LENGTH); // 5,000 × 22 characters: many refills of the 4 KiB pool
      expect(token).toMatch(/^[0-9A-Za-z]{22}$/);
      seen.add(token);
    }
    expect(seen.size).toBe(5_000);
    expect(randomToken(1)).toMatch(/^[0-9A-Za-z]$/);
    expect(newRequestId()).toMatch(/^req_[0-9A-Za-z]{22}$/);
  });

  it('uses all 62 characters about equally (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const text = randomToken(62 * 2_000);
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const count of counts.values()) expect(Math.abs(count - 2_000)).toBeLessThan(300); // > 6 σ
  });
});
