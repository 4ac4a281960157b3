import { RateLimiterCluster, RateLimiterClusterMaster } from 'rate-limiter-flexible';
import { fromFlexible } from './flexible.js';
import { createMemoryRateLimiter } from './memory.js';
import type { Budgets, RateLimiter } from './rate-limiter.js';

/** How long a worker waits for the primary's answer before it counts in its own memory instead. */
const PRIMARY_TIMEOUT_MS = 1_000;

/**
 * The primary of a WORKERS > 1 cluster (src/cluster/): keeps the in-memory budgets of all its workers,
 * so a key gets its budget once, not once per worker. Answers `createClusterRateLimiter` over the
 * cluster's IPC channel; must run before the first worker is forked (a worker announces its limiters
 * once, at start). rate-limiter-flexible keeps one such store per process, whatever the number of calls.
 */
export function serveClusterRateLimits(): void {
  new RateLimiterClusterMaster();
}

/**
 * A cluster worker's limiter with the memory store: every request is counted by the primary
 * (`serveClusterRateLimits`). If the primary does not answer within a second, the worker counts in its
 * own memory until it does, as the PostgreSQL limiter does when the database fails.
 */
export function createClusterRateLimiter(budgets: Budgets): RateLimiter {
  const shared = fromFlexible(
    (name, budget) =>
      new RateLimiterCluster({
        points: budget.points,
        duration: budget.windowSeconds,
        keyPrefix: `cluster:${name}`,
        timeoutMs: PRIMARY_TIMEOUT_MS,
      }),
    budgets,
  );
  const own = createMemoryRateLimiter(budgets);
  return {
    // fromFlexible turns over-budget into a decision; what is left to reject is the primary's silence.
    consume: (key, budget) => shared.consume(key, budget).catch(() => own.consume(key, budget)),
    peek: (key, budget) => shared.peek(key, budget).catch(() => own.peek(key, budget)),
    close: async () => {},
  };
}
