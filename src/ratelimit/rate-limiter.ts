import type { KeyMode } from '../core/key-mode.js';

/** What one request costs against a budget, and what is left. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Points per window of this budget. */
  limit: number;
  remaining: number;
  /** Seconds until the window resets (delta, not a timestamp). */
  resetSeconds: number;
}

/**
 * The budgets counted: requests of each `pk_test_` and `pk_live_` key, and failed API key attempts of
 * each client address (`auth_failures`, see docs/security.md).
 */
export type BudgetName = KeyMode | 'auth_failures';

/** Counts per key and budget. Implementations: memory, Redis, PostgreSQL. */
export interface RateLimiter {
  /** Uses one point of `key`'s budget. */
  consume(key: string, budget: BudgetName): Promise<RateLimitDecision>;
  /** `key`'s budget as it stands, using none of it (`allowed: false` once nothing is left). */
  peek(key: string, budget: BudgetName): Promise<RateLimitDecision>;
  /** Releases what the limiter owns (a Redis connection); never a database it was given. */
  close(): Promise<void>;
  /** Redis only: whether its connection is up now (else the in-memory fallback counts). */
  redisConnected?(): boolean;
}

export interface Budget {
  points: number;
  windowSeconds: number;
}

/** Without `auth_failures`, `DEFAULT_AUTH_FAILURE_BUDGET`. */
export type Budgets = Record<KeyMode, Budget> & { auth_failures?: Budget };

/** The defaults of API_KEY_FAILURES_PER_ADDRESS and API_KEY_FAILURE_WINDOW_SECONDS. */
const DEFAULT_AUTH_FAILURE_BUDGET: Readonly<Budget> = { points: 20, windowSeconds: 60 };

export function allBudgets(budgets: Budgets): Record<BudgetName, Budget> {
  return { ...budgets, auth_failures: budgets.auth_failures ?? DEFAULT_AUTH_FAILURE_BUDGET };
}
