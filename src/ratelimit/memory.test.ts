import { describe, expect, it, vi } from 'vitest';
import { createMemoryRateLimiter } from './memory.js';

describe('memory rate limiter', () => {
  const budgets = { test: { points: 2, windowSeconds: 1 }, live: { points: 3, windowSeconds: 10 } };

  it('counts down the remaining budget and refuses the request after the last', async () => {
    const limiter = createMemoryRateLimiter(budgets);
    expect(await limiter.consume('key_a', 'test')).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      resetSeconds: 1,
    });
    expect(await limiter.consume('key_a', 'test')).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.consume('key_a', 'test')).toMatchObject({
      allowed: false,
      limit: 2,
      remaining: 0,
      resetSeconds: 1,
    });
  });

  it('gives test and live keys their own budgets', async () => {
    const limiter = createMemoryRateLimiter(budgets);
    for (let i = 0; i < 3; i++) expect((await limiter.consume('key_live', 'live')).allowed).toBe(true);
    expect(await limiter.consume('key_live', 'live')).toMatchObject({
      allowed: false,
      limit: 3,
      resetSeconds: 10,
    });
  });

  it('counts every key separately', async () => {
    const limiter = createMemoryRateLimiter(budgets);
    await limiter.consume('key_one', 'test');
    await limiter.consume('key_one', 'test');
    expect((await limiter.consume('key_one', 'test')).allowed).toBe(false);
    expect((await limiter.consume('key_two', 'test')).allowed).toBe(true);
  });

  // rate-limiter-flexible reads Date.now() and sets its own timers, so its clock is vitest's fake one.
  it('starts a fresh budget when the window has passed', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    try {
      const limiter = createMemoryRateLimiter(budgets);
      await limiter.consume('key_w', 'test');
      await limiter.consume('key_w', 'test');
      expect((await limiter.consume('key_w', 'test')).allowed).toBe(false);
      vi.advanceTimersByTime(999);
      expect((await limiter.consume('key_w', 'test')).allowed).toBe(false);
      vi.advanceTimersByTime(1);
      expect(await limiter.consume('key_w', 'test')).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('peeks at a budget without using it, and keeps the failed-authentication budget apart', async () => {
    const limiter = createMemoryRateLimiter({ ...budgets, auth_failures: { points: 2, windowSeconds: 60 } });
    expect(await limiter.peek('203.0.113.7', 'auth_failures')).toEqual({
      allowed: true,
      limit: 2,
      remaining: 2,
      resetSeconds: 0,
    });
    await limiter.consume('203.0.113.7', 'auth_failures');
    expect(await limiter.peek('203.0.113.7', 'auth_failures')).toMatchObject({ allowed: true, remaining: 1 });
    await limiter.consume('203.0.113.7', 'auth_failures');
    expect(await limiter.peek('203.0.113.7', 'auth_failures')).toMatchObject({
      allowed: false,
      remaining: 0,
      resetSeconds: 60,
    });
    expect(await limiter.peek('203.0.113.7', 'auth_failures')).toMatchObject({ allowed: false });
    expect((await limiter.consume('203.0.113.7', 'test')).allowed).toBe(true);
  });

  it('gives failed authentications 20 per 60 s unless told otherwise', async () => {
    const limiter = createMemoryRateLimiter(budgets);
    expect(await limiter.peek('203.0.113.8', 'auth_failures')).toMatchObject({ limit: 20 });
  });
});
