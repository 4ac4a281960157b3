import { describe, expect, it } from 'vitest';
import { canonicalJson, defaultOutcome } from './idempotency-rules.js';

describe('defaultOutcome', () => {
  it('stores successes and the final answers of an operation', () => {
    expect(defaultOutcome(200, undefined)).toBe('store');
    expect(defaultOutcome(201, undefined)).toBe('store');
    expect(defaultOutcome(422, 'order_rejected')).toBe('store');
    expect(defaultOutcome(403, 'wholesaler_function_not_agreed')).toBe('store');
  });

  it('reopens an order whose outcome is unknown, so the retry reconciles', () => {
    expect(defaultOutcome(504, 'order_outcome_unknown')).toBe('reopen');
  });

  it('reopens a return announcement or take-back offer whose answer was lost, so the retry sends the same id', () => {
    expect(defaultOutcome(504, 'return_outcome_unknown')).toBe('reopen');
  });

  it('releases refusals and failures after which nothing happened', () => {
    for (const [status, kind] of [
      [400, 'invalid_request'],
      [400, 'wholesaler_credentials_missing'],
      [401, 'wholesaler_credentials_rejected'],
      [404, 'wholesaler_not_found'],
      [502, 'wholesaler_unreachable'],
      [503, 'wholesaler_circuit_open'],
      [504, 'wholesaler_timeout'],
      [500, 'internal_error'],
      [500, undefined],
    ] as const) {
      expect(defaultOutcome(status, kind)).toBe('release');
    }
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":0,"z":1}]},"b":1}',
    );
  });

  it('drops undefined members like JSON.stringify', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });
});
