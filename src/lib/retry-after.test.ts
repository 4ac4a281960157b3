import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.js';

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 0, 5, 9, 0, 0);

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 7 ', now)).toBe(7_000);
    expect(parseRetryAfter('Mon, 05 Jan 2026 09:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 05 Jan 2026 08:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('reads any delay-seconds and any future HTTP date back exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (seconds) => {
        expect(parseRetryAfter(String(seconds), now)).toBe(seconds * 1000);
        expect(parseRetryAfter(new Date(now + seconds * 1000).toUTCString(), now)).toBe(seconds * 1000);
      }),
    );
  });

  it('never answers a negative delay or NaN, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        const delay = parseRetryAfter(text, now);
        if (delay !== undefined) expect(delay).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});
