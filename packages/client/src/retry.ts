import type { ErrorKind } from './generated/api.js';

/**
 * When the client repeats a request by itself (docs/idempotency.md, docs/error-catalogue.md). Kinds that
 * say nothing was done, or that the gateway is busy, are retried for any request; kinds that say the
 * outcome is unknown only for a request that is safe to repeat: a GET or DELETE, or one carrying an
 * Idempotency-Key, which the gateway then reconciles instead of carrying out again.
 */
const NOTHING_DONE: ReadonlySet<ErrorKind> = new Set([
  'rate_limited',
  'idempotency_request_in_progress',
  'wholesaler_throttled',
  'wholesaler_circuit_open',
  'gateway_busy',
  'wholesaler_unreachable',
  'service_unavailable',
]);
const OUTCOME_UNKNOWN: ReadonlySet<ErrorKind> = new Set([
  'order_outcome_unknown',
  'return_outcome_unknown',
  'wholesaler_timeout',
]);

export interface RetryOptions {
  /** Repeats after the first attempt; 0 turns retries off. Default 2. */
  retries?: number;
  /** The first pause without Retry-After, doubled each time (with jitter); default 250 ms. */
  baseDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown. Default 30 s. */
  maxRetryAfterMs?: number;
}

export interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxRetryAfterMs: number;
}

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  return {
    retries: options.retries ?? 2,
    baseDelayMs: options.baseDelayMs ?? 250,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 30_000,
  };
}

/**
 * Whether an error answer of this kind may be retried for a request of this repeatability. A wholesaler's
 * HTTP error is worth repeating only when the gateway says when (Retry-After: its 408, 429 or 5xx; its
 * 503, `wholesaler_unavailable`, always has one), and, since a 5xx may come after the wholesaler acted,
 * only for a repeatable request.
 */
export function retriesKind(kind: string, repeatable: boolean, hasRetryAfter = false): boolean {
  if (NOTHING_DONE.has(kind as ErrorKind)) return true;
  if (!repeatable) return false;
  if (OUTCOME_UNKNOWN.has(kind as ErrorKind)) return true;
  return (kind === 'wholesaler_http_error' || kind === 'wholesaler_unavailable') && hasRetryAfter;
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * The pause before repeat number `retry` (1 for the first repeat): the gateway's Retry-After when given,
 * else exponential backoff with full jitter. Undefined: do not retry (Retry-After beyond the limit).
 */
export function retryDelayMs(
  policy: RetryPolicy,
  retry: number,
  retryAfterSeconds: number | undefined,
  random = Math.random,
): number | undefined {
  if (retryAfterSeconds !== undefined) {
    const ms = retryAfterSeconds * 1000;
    return ms > policy.maxRetryAfterMs ? undefined : ms;
  }
  const ceiling = policy.baseDelayMs * 2 ** (retry - 1);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
