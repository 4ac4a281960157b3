import { describe, expect, it } from 'vitest';
import { defaultOutcome } from './idempotency-outcome.js';

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
