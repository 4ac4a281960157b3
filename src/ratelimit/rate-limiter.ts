import type { KeyMode } from '../store/api-key-secret.js';

/** What one request costs against a key's budget, and what is left. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Requests per window for this key's mode. */
  limit: number;
  remaining: number;
  /** Seconds until the window resets (delta, not a timestamp). */
  resetSeconds: number;
}

/** Counts requests per key; test and live keys have separate budgets. Implementations: memory, Redis, PostgreSQL. */
export interface RateLimiter {
  consume(key: string, mode: KeyMode): Promise<RateLimitDecision>;
  /** Releases what the limiter owns (a Redis connection); never a database it was given. */
  close(): Promise<void>;
}

export interface Budget {
  points: number;
  windowSeconds: number;
}

export type Budgets = Record<KeyMode, Budget>;
