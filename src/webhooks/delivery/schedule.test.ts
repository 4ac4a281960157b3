import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, nextRetryDelayMs, RETRY_DELAYS_MS } from './schedule.js';

const HOUR = 3_600_000;

describe('retry schedule', () => {
  it('is 10 attempts over about three days, each step longer than the one before', () => {
    expect(MAX_ATTEMPTS).toBe(10);
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total / HOUR).toBeCloseTo(75.6, 1);
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++)
      expect(RETRY_DELAYS_MS[i]!).toBeGreaterThan(RETRY_DELAYS_MS[i - 1]!);
  });

  it('jitters each delay by at most ±10 %', () => {
    RETRY_DELAYS_MS.forEach((base, index) => {
      const attempts = index + 1;
      expect(nextRetryDelayMs(attempts, { random: () => 0 })).toBe(Math.round(base * 0.9));
      expect(nextRetryDelayMs(attempts, { random: () => 0.5 })).toBe(base);
      expect(nextRetryDelayMs(attempts, { random: () => 0.999999 })).toBeLessThanOrEqual(
        Math.round(base * 1.1),
      );
    });
  });

  it('gives up after the tenth attempt', () => {
    expect(nextRetryDelayMs(9)).toBeDefined();
    expect(nextRetryDelayMs(10)).toBeUndefined();
    expect(nextRetryDelayMs(0)).toBeUndefined();
  });

  it('lets Retry-After postpone a retry, up to 24 hours, but never bring it forward', () => {
    const random = () => 0.5;
    expect(nextRetryDelayMs(1, { retryAfterMs: 60_000, random })).toBe(60_000);
    expect(nextRetryDelayMs(2, { retryAfterMs: 60_000, random })).toBe(5 * 60_000);
    expect(nextRetryDelayMs(1, { retryAfterMs: 30 * 24 * HOUR, random })).toBe(MAX_RETRY_AFTER_MS);
  });
});
