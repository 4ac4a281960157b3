import { describe, expect, it } from 'vitest';
import {
  checkOrders,
  checkRateLimit,
  checkWebhooks,
  type KeyOutcome,
  rateLimitBound,
  summariseWebhooks,
} from './invariants.js';

const acked = (key: string, ...ids: string[]): KeyOutcome => ({
  key,
  acknowledgedOrderIds: ids,
  unresolved: false,
});
const unresolved = (key: string): KeyOutcome => ({ key, acknowledgedOrderIds: [], unresolved: true });
const failed = (checks: { name: string; ok: boolean }[]) => checks.filter((c) => !c.ok).map((c) => c.name);

describe('cluster benchmark order invariants', () => {
  it('passes when every acknowledged order is at the wholesaler once', () => {
    const checks = checkOrders({
      keys: [acked('k1', 'GW-a'), acked('k2', 'GW-b')],
      wholesalerOrderIds: ['GW-a', 'GW-b'],
      bestellenCalls: 3,
    });
    expect(failed(checks)).toEqual([]);
  });

  it('fails when one key was answered with two gateway orders', () => {
    const checks = checkOrders({
      keys: [acked('k1', 'GW-a', 'GW-c')],
      wholesalerOrderIds: ['GW-a', 'GW-c'],
      bestellenCalls: 2,
    });
    expect(failed(checks)).toContain('orders: no key answered with two gateway orders');
  });

  it('fails as doubled when the wholesaler holds an order no client saw and no key stayed unresolved', () => {
    const checks = checkOrders({
      keys: [acked('k1', 'GW-a')],
      wholesalerOrderIds: ['GW-a', 'GW-x'],
      bestellenCalls: 2,
    });
    expect(failed(checks)).toEqual(['orders: 0 doubled at the wholesaler']);
  });

  it('allows an unacknowledged order at the wholesaler for a key whose outcome stayed unknown', () => {
    const checks = checkOrders({
      keys: [acked('k1', 'GW-a'), unresolved('k2')],
      wholesalerOrderIds: ['GW-a', 'GW-x'],
      bestellenCalls: 2,
    });
    expect(failed(checks)).toEqual([]);
  });

  it('fails as lost when an acknowledged order is missing at the wholesaler', () => {
    const checks = checkOrders({
      keys: [acked('k1', 'GW-a'), acked('k2', 'GW-b')],
      wholesalerOrderIds: ['GW-a'],
      bestellenCalls: 1,
    });
    expect(failed(checks)).toEqual(['orders: 0 lost (every acknowledged order is at the wholesaler)']);
  });
});

describe('cluster benchmark webhook invariants', () => {
  it('counts duplicates without failing (at-least-once) but fails on a missing event', () => {
    const facts = { sentEventIds: ['e1', 'e2', 'e3'], receivedIds: ['e1', 'e2', 'e1'] };
    expect(summariseWebhooks(facts)).toEqual({ sent: 3, received: 3, distinctReceived: 2, duplicates: 1 });
    expect(failed(checkWebhooks(facts))).toEqual(['webhooks: 0 lost']);
    expect(failed(checkWebhooks({ sentEventIds: ['e1'], receivedIds: ['e1', 'e1'] }))).toEqual([]);
  });

  it('fails on an arrival that matches no recorded event', () => {
    const checks = checkWebhooks({ sentEventIds: ['e1'], receivedIds: ['e1', 'zz'] });
    expect(failed(checks)).toEqual(['webhooks: no event received that was not recorded']);
  });
});

describe('cluster benchmark rate-limit invariant', () => {
  const base = { points: 25, windowSeconds: 1, durationMs: 6_000, limited: 400, other: 0, tolerance: 0 };

  it('bounds a 6 s phase at 7 windows of 25', () => {
    expect(rateLimitBound({ ...base, allowed: 0 })).toBe(175);
  });

  it('passes within the bound and fails above it, as per-process counting would be', () => {
    expect(failed(checkRateLimit({ ...base, allowed: 175 }))).toEqual([]);
    expect(failed(checkRateLimit({ ...base, allowed: 3 * 25 * 6 }))).toEqual([
      'rate limit: allowed requests within the shared budget',
    ]);
  });

  it('fails when nothing was limited or another status came back', () => {
    expect(failed(checkRateLimit({ ...base, allowed: 100, limited: 0 }))).toEqual([
      'rate limit: allowed requests within the shared budget',
    ]);
    expect(failed(checkRateLimit({ ...base, allowed: 100, other: 2 }))).toEqual([
      'rate limit: every other answer is 429',
    ]);
  });
});
