import { describe, expect, it } from 'vitest';
import { callsThatFit, heapBudgetWarning } from './heap-budget.js';

const MB = 2 ** 20;

describe('heapBudgetWarning', () => {
  it('is silent for the defaults (16 + 64 calls) under any heap limit node starts with', () => {
    expect(heapBudgetWarning({ maxConcurrency: 16, maxQueue: 64 }, 112 * MB)).toBeNull();
  });

  it('is silent for 20,000 calls under the default limit of a large machine', () => {
    expect(heapBudgetWarning({ maxConcurrency: 10_000, maxQueue: 10_000 }, 4144 * MB)).toBeNull();
  });

  it('names both settings, the calls, the limit and what fits when the bounded-memory profile cannot hold them', () => {
    // npm run start:bounded-memory: --max-old-space-size=320 plus three 32 MB semi-spaces.
    const warning = heapBudgetWarning({ maxConcurrency: 10_000, maxQueue: 10_000 }, 416 * MB);
    expect(warning).toContain('UPSTREAM_MAX_CONCURRENCY + UPSTREAM_MAX_QUEUE let 20000 calls');
    expect(warning).toContain('heap limit (416 MB) holds about 12779');
    expect(warning).toContain('--max-old-space-size');
  });

  it('holds the 9,980 calls of the memory benchmark in the bounded-memory profile', () => {
    expect(callsThatFit(416 * MB)).toBeGreaterThan(9_980);
    expect(heapBudgetWarning({ maxConcurrency: 9_980, maxQueue: 0 }, 416 * MB)).toBeNull();
  });

  it('warns from the first call over what fits', () => {
    const fit = callsThatFit(416 * MB);
    expect(heapBudgetWarning({ maxConcurrency: fit, maxQueue: 0 }, 416 * MB)).toBeNull();
    expect(heapBudgetWarning({ maxConcurrency: fit, maxQueue: 1 }, 416 * MB)).not.toBeNull();
  });
});
