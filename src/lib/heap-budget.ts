/**
 * A start-time check that the configured wholesaler calls fit in the process's V8 heap limit
 * (docs/configuration.md "Bounded memory"): a process whose live objects outgrow the limit stops with
 * "JavaScript heap out of memory", so a queue sized beyond it is a crash waiting for a busy day.
 */

/**
 * What one wholesaler call in flight keeps alive: about 22 KB measured (docs/resilience.md "Memory"),
 * rounded up for the answer being decoded when it arrives.
 */
const LIVE_BYTES_PER_CALL = 25 * 1024;
/** The share of the heap limit live calls may take: V8 needs the rest to collect. */
const USABLE_SHARE = 0.75;

interface CallLimits {
  maxConcurrency: number;
  maxQueue: number;
}

/** The calls a heap limit holds at once, with room left to collect. */
export function callsThatFit(heapLimitBytes: number): number {
  return Math.floor((heapLimitBytes * USABLE_SHARE) / LIVE_BYTES_PER_CALL);
}

/**
 * A warning when UPSTREAM_MAX_CONCURRENCY + UPSTREAM_MAX_QUEUE (per wholesaler endpoint, so the least a
 * busy gateway holds) let more calls be in flight than `heapLimitBytes` holds; null when they fit.
 */
export function heapBudgetWarning(limits: CallLimits, heapLimitBytes: number): string | null {
  const calls = limits.maxConcurrency + limits.maxQueue;
  const fit = callsThatFit(heapLimitBytes);
  if (calls <= fit) return null;
  const limitMb = Math.round(heapLimitBytes / 2 ** 20);
  return (
    `UPSTREAM_MAX_CONCURRENCY + UPSTREAM_MAX_QUEUE let ${calls} calls be in flight to one wholesaler endpoint, ` +
    `but this process's heap limit (${limitMb} MB) holds about ${fit}, and a process that reaches it stops ` +
    `with "JavaScript heap out of memory": lower them, or raise --max-old-space-size ` +
    `(docs/configuration.md, "Bounded memory")`
  );
}
