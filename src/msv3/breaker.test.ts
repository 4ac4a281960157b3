import { describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import { type AllowedAdmission, type BreakerTransition, createBreaker } from './breaker.js';

function setup(failureThreshold = 3, coolDownMs = 10_000) {
  const clock = manualClock();
  const changes: BreakerTransition<string>[] = [];
  const breaker = createBreaker<string>({
    failureThreshold,
    coolDownMs,
    clock,
    onChange: (change) => changes.push(change),
  });
  const admit = (): AllowedAdmission => {
    const admission = breaker.admit();
    if (!admission.allowed) throw new Error('expected the call to be allowed');
    return admission;
  };
  const fail = (error = 'down') => breaker.record(admit(), 'failure', error);
  const succeed = () => breaker.record(admit(), 'success');
  return { clock, changes, breaker, admit, fail, succeed };
}

describe('circuit breaker', () => {
  it('stays closed below the threshold, and a success resets the count', () => {
    const { breaker, fail, succeed, changes } = setup(3);
    fail();
    fail();
    expect(breaker.snapshot()).toEqual({ state: 'closed', consecutiveFailures: 2, retryAfterMs: 0 });
    succeed();
    fail();
    fail();
    expect(breaker.snapshot()).toEqual({ state: 'closed', consecutiveFailures: 2, retryAfterMs: 0 });
    expect(changes).toEqual([]);
  });

  it('opens after N consecutive failures and refuses calls with the remaining cool-down', () => {
    const { breaker, clock, fail, changes } = setup(3, 10_000);
    fail('one');
    fail('two');
    fail('three');
    expect(changes).toEqual([{ from: 'closed', to: 'open', at: clock.now(), lastError: 'three' }]);
    expect(breaker.admit()).toEqual({ allowed: false, retryAfterMs: 10_000 });
    clock.advance(4_000);
    expect(breaker.admit()).toEqual({ allowed: false, retryAfterMs: 6_000 });
    expect(breaker.snapshot()).toMatchObject({ state: 'open', retryAfterMs: 6_000 });
  });

  it('lets exactly one trial through after the cool-down, and closes when it succeeds', () => {
    const { breaker, clock, fail, admit, changes } = setup(1, 10_000);
    fail();
    clock.advance(10_000);
    const trial = admit();
    expect(trial.trial).toBe(true);
    const other = breaker.admit();
    expect(other.allowed).toBe(false);
    if (!other.allowed) expect(other.retryAfterMs).toBe(1_000);

    breaker.record(trial, 'success');
    expect(changes.map(({ from, to }) => `${from}->${to}`)).toEqual([
      'closed->open',
      'open->half_open',
      'half_open->closed',
    ]);
    expect(breaker.snapshot()).toEqual({ state: 'closed', consecutiveFailures: 0, retryAfterMs: 0 });
    expect(admit().trial).toBe(false);
  });

  it('re-opens for a fresh cool-down when the trial fails', () => {
    const { breaker, clock, fail, admit, changes } = setup(1, 10_000);
    fail();
    clock.advance(15_000);
    breaker.record(admit(), 'failure', 'still down');
    expect(changes.at(-1)).toEqual({
      from: 'half_open',
      to: 'open',
      at: clock.now(),
      lastError: 'still down',
    });
    expect(breaker.admit()).toEqual({ allowed: false, retryAfterMs: 10_000 });
  });

  it('frees the trial slot when the trial is abandoned, staying half-open', () => {
    const { breaker, clock, fail, admit } = setup(1, 10_000);
    fail();
    clock.advance(10_000);
    breaker.record(admit(), 'abandoned');
    expect(breaker.snapshot().state).toBe('half_open');
    expect(admit().trial).toBe(true);
  });

  it('ignores outcomes of calls admitted before the state changed', () => {
    const { breaker, admit, clock } = setup(1, 10_000);
    const early = admit();
    const late = admit();
    breaker.record(early, 'failure', 'down');
    breaker.record(late, 'success');
    expect(breaker.snapshot().state).toBe('open');

    clock.advance(10_000);
    const trial = admit();
    breaker.record(late, 'failure', 'stale');
    expect(breaker.snapshot().state).toBe('half_open');
    breaker.record(trial, 'success');
    expect(breaker.snapshot().state).toBe('closed');
  });

  it('never changes state when only looked at', () => {
    const { breaker, clock, fail, changes } = setup(1, 10_000);
    fail();
    clock.advance(20_000);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', retryAfterMs: 0 });
    expect(changes).toHaveLength(1);
  });

  it('keeps working when the change listener throws', () => {
    const clock = manualClock();
    const breaker = createBreaker<string>({
      failureThreshold: 1,
      coolDownMs: 1_000,
      clock,
      onChange: () => {
        throw new Error('listener bug');
      },
    });
    const admission = breaker.admit();
    if (!admission.allowed) throw new Error('expected allowed');
    expect(() => breaker.record(admission, 'failure')).not.toThrow();
    expect(breaker.snapshot().state).toBe('open');
  });

  it('refuses a threshold below 1', () => {
    expect(() => createBreaker({ failureThreshold: 0, coolDownMs: 1, clock: manualClock() })).toThrow(
      RangeError,
    );
  });
});
