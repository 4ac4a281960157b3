import type { Clock } from '../lib/clock.js';

/**
 * Circuit breaker for one wholesaler. Pure state machine: no timers; time comes from the clock, so the move
 * from `open` to `half_open` happens at the first `admit()` after the cool-down.
 *
 * closed --N consecutive failures--> open --cool-down over, next admit--> half_open (one trial call)
 * half_open --trial succeeds--> closed;  half_open --trial fails--> open (new cool-down)
 */
export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions<E> {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  coolDownMs: number;
  clock: Clock;
  /** Called synchronously on every state change; must not throw (exceptions are ignored). */
  onChange?: (change: BreakerTransition<E>) => void;
}

export interface BreakerTransition<E> {
  from: BreakerState;
  to: BreakerState;
  /** Epoch ms, from the clock. */
  at: number;
  /** The failure that opened (or re-opened) the circuit. */
  lastError?: E;
}

type Admission =
  | { allowed: true; trial: boolean; generation: number }
  | { allowed: false; retryAfterMs: number };

export type AllowedAdmission = Extract<Admission, { allowed: true }>;

/** `abandoned`: the call ended without telling anything about the wholesaler (e.g. the caller aborted). */
type CallOutcome = 'success' | 'failure' | 'abandoned';

export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  /** Remaining cool-down while open; 0 otherwise (or once the cool-down is over). */
  retryAfterMs: number;
}

export interface Breaker<E> {
  /** Asks to make a call. An allowed admission must be followed by exactly one `record`. */
  admit(): Admission;
  record(admission: AllowedAdmission, outcome: CallOutcome, error?: E): void;
  /** Read-only view; never changes state. */
  snapshot(): BreakerSnapshot;
}

/** While a half-open trial is running, other callers are told to come back after this long (at most). */
const TRIAL_RETRY_AFTER_MS = 1_000;

export function createBreaker<E>(options: BreakerOptions<E>): Breaker<E> {
  const { failureThreshold, coolDownMs, clock, onChange } = options;
  if (!(failureThreshold >= 1)) throw new RangeError('failureThreshold must be at least 1');

  let state: BreakerState = 'closed';
  let consecutiveFailures = 0;
  let openedAt = 0;
  let trialRunning = false;
  // Bumped on every transition, so outcomes of calls admitted under an earlier state are ignored.
  let generation = 0;

  function moveTo(to: BreakerState, lastError?: E): void {
    const from = state;
    state = to;
    generation++;
    trialRunning = false;
    if (to === 'open') openedAt = clock.now();
    if (to === 'closed') consecutiveFailures = 0;
    try {
      onChange?.({ from, to, at: clock.now(), ...(lastError === undefined ? {} : { lastError }) });
    } catch {
      // A faulty listener must not fail the call that happened to trigger the change.
    }
  }

  function remainingCoolDown(): number {
    return Math.max(0, openedAt + coolDownMs - clock.now());
  }

  return {
    admit() {
      if (state === 'open') {
        const retryAfterMs = remainingCoolDown();
        if (retryAfterMs > 0) return { allowed: false, retryAfterMs };
        moveTo('half_open');
      }
      if (state === 'half_open') {
        if (trialRunning) return { allowed: false, retryAfterMs: Math.min(coolDownMs, TRIAL_RETRY_AFTER_MS) };
        trialRunning = true;
        return { allowed: true, trial: true, generation };
      }
      return { allowed: true, trial: false, generation };
    },

    record(admission, outcome, error) {
      if (admission.generation !== generation) return;
      if (state === 'half_open') {
        if (outcome === 'abandoned') trialRunning = false;
        else if (outcome === 'success') moveTo('closed');
        else moveTo('open', error);
        return;
      }
      if (state !== 'closed' || outcome === 'abandoned') return;
      if (outcome === 'success') {
        consecutiveFailures = 0;
        return;
      }
      consecutiveFailures++;
      if (consecutiveFailures >= failureThreshold) moveTo('open', error);
    },

    snapshot() {
      return {
        state,
        consecutiveFailures,
        retryAfterMs: state === 'open' ? remainingCoolDown() : 0,
      };
    },
  };
}
