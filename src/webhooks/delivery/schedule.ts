/**
 * When failed deliveries are tried again: immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 14 h, 20 h and 24 h (10 attempts over about 3 days 4 hours), each delay with ±10 % jitter.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
];

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
const JITTER_RATIO = 0.1;
/** A subscription whose attempts all failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3_600_000;
/** A receiver's Retry-After is honoured up to this long. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * Delay before the next attempt after `attemptsMade` failed ones, or `undefined` when the schedule is
 * used up. A Retry-After (429/503) postpones the retry, never brings it forward.
 */
export function nextRetryDelayMs(
  attemptsMade: number,
  options: { retryAfterMs?: number; random?: () => number } = {},
): number | undefined {
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  if (base === undefined || attemptsMade < 1) return undefined;
  const random = options.random ?? Math.random;
  const jittered = Math.round(base * (1 + JITTER_RATIO * (2 * random() - 1)));
  const requested = Math.min(options.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  return Math.max(jittered, requested);
}
