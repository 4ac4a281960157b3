import { describe, expect, it } from 'vitest';
import { parseRetryAfter, retriesKind, retryDelayMs, retryPolicy } from './retry.js';

describe('retry rules', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-23T08:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3);
    expect(parseRetryAfter('Mon, 23 Nov 2026 08:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter('Mon, 23 Nov 2026 07:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('waits as Retry-After says, and not at all when that is longer than allowed', () => {
    const policy = retryPolicy({ maxRetryAfterMs: 10_000 });
    expect(retryDelayMs(policy, 1, 2)).toBe(2_000);
    expect(retryDelayMs(policy, 1, 11)).toBeUndefined();
  });

  it('backs off exponentially with jitter without Retry-After', () => {
    const policy = retryPolicy({ baseDelayMs: 100 });
    expect(retryDelayMs(policy, 1, undefined, () => 0)).toBe(50);
    expect(retryDelayMs(policy, 3, undefined, () => 1)).toBe(400);
  });

  it('repeats an unknown outcome only for a request that is safe to repeat', () => {
    expect(retriesKind('rate_limited', false)).toBe(true);
    expect(retriesKind('idempotency_request_in_progress', false)).toBe(true);
    expect(retriesKind('order_outcome_unknown', true)).toBe(true);
    expect(retriesKind('order_outcome_unknown', false)).toBe(false);
    expect(retriesKind('wholesaler_fault', true)).toBe(false);
    expect(retriesKind('wholesaler_http_error', true, true)).toBe(true);
    expect(retriesKind('wholesaler_http_error', true, false)).toBe(false);
    expect(retriesKind('wholesaler_http_error', false, true)).toBe(false);
    expect(retriesKind('wholesaler_unavailable', true, true)).toBe(true);
    expect(retriesKind('wholesaler_unavailable', false, true)).toBe(false);
    expect(retriesKind('idempotency_key_reused', true)).toBe(false);
  });
});
