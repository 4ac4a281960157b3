import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createConcurrencyLimiter, type SlotResult } from './concurrency.js';
import { stopNotice } from './stop-notice.js';

function granted(result: SlotResult): () => void {
  if (!result.ok) throw new Error(`expected a slot, got ${result.cause}`);
  return result.release;
}

/** Lets the limiter's resolved promises reach their `then` callbacks. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await Promise.resolve();
}

describe('concurrency limiter', () => {
  it('grants up to the cap at once and hands freed slots to waiters in arrival order', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 2, maxQueue: 5, maxWaitMs: 5_000 });
    const first = granted(await limiter.acquire());
    const second = granted(await limiter.acquire());
    const order: string[] = [];
    const third = limiter.acquire().then((result) => {
      order.push('third');
      return result;
    });
    const fourth = limiter.acquire().then((result) => {
      order.push('fourth');
      return result;
    });
    expect(limiter.queued).toBe(2);

    first();
    granted(await third);
    second();
    granted(await fourth);
    expect(order).toEqual(['third', 'fourth']);
    expect(limiter.active).toBe(2);
    expect(limiter.queued).toBe(0);
  });

  it('refuses when the queue is full', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 5_000 });
    const release = granted(await limiter.acquire());
    const waiting = limiter.acquire();
    expect(await limiter.acquire()).toEqual({ ok: false, cause: 'queue_full', retryAfterMs: 0 });
    release();
    granted(await waiting);
  });

  it('gives up after the maximum wait and leaves the queue', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 30 });
    const release = granted(await limiter.acquire());
    expect(await limiter.acquire()).toMatchObject({ ok: false, cause: 'wait_timeout' });
    expect(limiter.queued).toBe(0);
    release();
    expect(limiter.active).toBe(0);
  });

  it('leaves the queue when the caller aborts', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 5_000 });
    granted(await limiter.acquire());
    const controller = new AbortController();
    const waiting = limiter.acquire('acct_a', controller.signal);
    controller.abort();
    expect(await waiting).toEqual({ ok: false, cause: 'aborted' });
    expect(limiter.queued).toBe(0);
    expect(await limiter.acquire('acct_a', AbortSignal.abort())).toEqual({ ok: false, cause: 'aborted' });
  });

  it('ends every wait when the shutdown comes, and refuses later callers as aborted', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 3, maxWaitMs: 5_000 });
    const shutdown = new AbortController();
    const stop = stopNotice(shutdown.signal);
    const release = granted(await limiter.acquire('acct_a', undefined, stop));
    const waits = [limiter.acquire('acct_a', undefined, stop), limiter.acquire('acct_b', undefined, stop)];
    expect(limiter.queued).toBe(2);
    shutdown.abort();
    expect(await Promise.all(waits)).toEqual([
      { ok: false, cause: 'aborted' },
      { ok: false, cause: 'aborted' },
    ]);
    expect(limiter.queued).toBe(0);
    expect(await limiter.acquire('acct_a', undefined, stop)).toEqual({ ok: false, cause: 'aborted' });
    release();
    expect(limiter.active).toBe(0);
  });

  it('stops listening for the shutdown once a waiter is granted its slot', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 5_000 });
    const shutdown = new AbortController();
    const stop = stopNotice(shutdown.signal);
    const listening = vi.spyOn(stop, 'listen');
    const forgotten = vi.spyOn(stop, 'unlisten');
    const release = granted(await limiter.acquire('acct_a', undefined, stop));
    const waiting = limiter.acquire('acct_a', undefined, stop);
    release();
    const next = granted(await waiting);
    expect(forgotten.mock.calls).toEqual(listening.mock.results.map((result) => [result.value]));
    shutdown.abort();
    next();
    expect(limiter.active).toBe(0);
  });

  it('ignores a second release of the same slot', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 2, maxQueue: 0, maxWaitMs: 10 });
    const release = granted(await limiter.acquire());
    granted(await limiter.acquire());
    release();
    release();
    expect(limiter.active).toBe(1);
  });

  it('lets an account alone use every slot, but gives the next free slot to a newly waiting account', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 3, maxQueue: 10, maxWaitMs: 5_000 });
    const releases = [];
    for (let i = 0; i < 3; i++) releases.push(granted(await limiter.acquire('big')));
    const order: string[] = [];
    const waiters = ['big', 'big', 'small', 'big'].map((account) =>
      limiter.acquire(account).then((result) => {
        order.push(account);
        return granted(result);
      }),
    );
    releases[0]!();
    await settle();
    expect(order).toEqual(['small']);
    releases[1]!();
    releases[2]!();
    await settle();
    expect(order).toEqual(['small', 'big', 'big']);
    (await waiters[2]!)();
    await settle();
    expect(order).toEqual(['small', 'big', 'big', 'big']);
    for (const waiter of waiters) (await waiter)();
    expect(limiter.active).toBe(0);
  });
});

describe('concurrency limiter: refusing early with a Retry-After', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 0;
  });

  async function warmed(maxConcurrent: number, holdMs: number) {
    const limiter = createConcurrencyLimiter({ maxConcurrent, maxQueue: 100, maxWaitMs: 5_000, now });
    const release = granted(await limiter.acquire('a'));
    clock += holdMs;
    release();
    return limiter;
  }

  it('keeps the mean slot hold time', async () => {
    const limiter = await warmed(2, 2_000);
    expect(limiter.meanHoldMs).toBe(2_000);
    const release = granted(await limiter.acquire('a'));
    clock += 1_000;
    release();
    expect(limiter.meanHoldMs).toBe(1_800);
  });

  it('refuses at once when the estimated wait exceeds the deadline, with the queue drain time', async () => {
    // 2 slots of 2 s each: five waiters take 5 s to drain; the sixth would wait 6 s.
    const limiter = await warmed(2, 2_000);
    granted(await limiter.acquire('a'));
    granted(await limiter.acquire('a'));
    for (let i = 0; i < 5; i++) void limiter.acquire('a');
    expect(limiter.queued).toBe(5);
    expect(await limiter.acquire('a')).toEqual({ ok: false, cause: 'wait_too_long', retryAfterMs: 5_000 });
    // Another account has one grant ahead of it under the fairness rule (a's first waiter): it may wait.
    void limiter.acquire('b');
    expect(limiter.queued).toBe(6);
  });

  it('answers a refusal for a full queue with the time the queue ahead needs', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 4, maxQueue: 8, maxWaitMs: 600_000, now });
    const release = granted(await limiter.acquire());
    clock += 3_000;
    release();
    for (let i = 0; i < 12; i++) void limiter.acquire();
    expect(await limiter.acquire()).toEqual({ ok: false, cause: 'queue_full', retryAfterMs: 6_000 });
  });
});

describe('concurrency limiter: holding refusals', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 0;
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** 2 slots held 2 s each, both busy, five waiters: a newcomer would wait 6 s (drain time 5 s). */
  async function crowded(maxRefusalHoldMs: number) {
    const limiter = createConcurrencyLimiter({
      maxConcurrent: 2,
      maxQueue: 100,
      maxWaitMs: 5_000,
      maxRefusalHoldMs,
      now,
    });
    const release = granted(await limiter.acquire('a'));
    clock += 2_000;
    release();
    granted(await limiter.acquire('a'));
    granted(await limiter.acquire('a'));
    for (let i = 0; i < 5; i++) void limiter.acquire('a');
    return limiter;
  }

  it('answers a refusal after the drain time, at most the hold, with a Retry-After for the rest', async () => {
    const limiter = await crowded(3_000);
    let answer: SlotResult | undefined;
    void limiter.acquire('a').then((result) => {
      answer = result;
    });
    await vi.advanceTimersByTimeAsync(2_999);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answer).toEqual({ ok: false, cause: 'wait_too_long', retryAfterMs: 2_000 });
    // A held refusal takes no place in the queue.
    expect(limiter.queued).toBe(5);
  });

  it('answers at once with no hold, and ends a held refusal when the caller gives up', async () => {
    expect(await (await crowded(0)).acquire('a')).toEqual({
      ok: false,
      cause: 'wait_too_long',
      retryAfterMs: 5_000,
    });
    const limiter = await crowded(5_000);
    const controller = new AbortController();
    const held = limiter.acquire('a', controller.signal);
    controller.abort();
    await expect(held).resolves.toEqual({ ok: false, cause: 'aborted' });
  });
});

type Step =
  | { kind: 'acquire'; account: number }
  | { kind: 'release'; pick: number }
  | { kind: 'abort'; pick: number }
  | { kind: 'advance'; ms: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('acquire' as const), account: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 400 }) }),
);

interface Caller {
  account: number;
  seq: number;
  controller: AbortController;
  outcome?: SlotResult;
  release?: () => void;
}

describe('concurrency limiter properties', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('never has more than the cap in flight, serves or refuses every waiter, and keeps FIFO per account', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(stepArbitrary, { maxLength: 60 }),
        async (maxConcurrent, maxQueue, steps) => {
          let clock = 0;
          const limiter = createConcurrencyLimiter({
            maxConcurrent,
            maxQueue,
            maxWaitMs: 1_000,
            now: () => clock,
          });
          const callers: Caller[] = [];
          const grantOrder: Caller[] = [];
          let held: Caller[] = [];
          const check = () => {
            expect(held.length).toBeLessThanOrEqual(maxConcurrent);
            expect(limiter.active).toBe(held.length);
            expect(limiter.queued).toBeLessThanOrEqual(maxQueue);
          };
          const run = async (step: Step) => {
            if (step.kind === 'acquire') {
              const caller: Caller = {
                account: step.account,
                seq: callers.length,
                controller: new AbortController(),
              };
              callers.push(caller);
              void limiter.acquire(`acct_${step.account}`, caller.controller.signal).then((outcome) => {
                caller.outcome = outcome;
                if (outcome.ok) {
                  caller.release = outcome.release;
                  held.push(caller);
                  grantOrder.push(caller);
                }
              });
            } else if (step.kind === 'release' && held.length > 0) {
              const caller = held[step.pick % held.length]!;
              held = held.filter((other) => other !== caller);
              caller.release!();
            } else if (step.kind === 'abort') {
              const waiting = callers.filter((caller) => caller.outcome === undefined);
              if (waiting.length > 0) waiting[step.pick % waiting.length]!.controller.abort();
            } else if (step.kind === 'advance') {
              clock += step.ms;
              await vi.advanceTimersByTimeAsync(step.ms);
            }
            await settle();
            check();
          };
          for (const step of steps) await run(step);
          // Drain: every slot released, the deadline passed: nobody may still be waiting.
          for (let round = 0; round < callers.length + 2; round++) {
            for (const caller of held.splice(0)) caller.release!();
            await settle();
            clock += 1_001;
            await vi.advanceTimersByTimeAsync(1_001);
            await settle();
            check();
          }
          expect(callers.filter((caller) => caller.outcome === undefined)).toEqual([]);
          expect(limiter.active).toBe(0);
          expect(limiter.queued).toBe(0);
          for (const account of [0, 1, 2]) {
            const seqs = grantOrder
              .filter((caller) => caller.account === account)
              .map((caller) => caller.seq);
            expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('alternates two always-waiting accounts: their grants differ by at most one at any point', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.boolean(), { minLength: 2, maxLength: 40 }),
        fc.integer({ min: 5, max: 40 }),
        async (maxConcurrent, arrivals, rounds) => {
          const limiter = createConcurrencyLimiter({ maxConcurrent, maxQueue: 10_000, maxWaitMs: 60_000 });
          // Equal call times: slots come free in the order they were granted.
          const inFlight: (() => void)[] = [];
          const grants = { a: 0, b: 0 };
          const differences: number[] = [];
          for (let i = 0; i < maxConcurrent; i++) inFlight.push(granted(await limiter.acquire('other')));
          const enqueue = (account: 'a' | 'b') =>
            void limiter.acquire(account).then((result) => {
              inFlight.push(granted(result));
              grants[account]++;
              differences.push(Math.abs(grants.a - grants.b));
              enqueue(account); // always waiting: a new call for each one served
            });
          // Both queues filled in an arbitrary interleaving, each with at least one waiter.
          enqueue('a');
          enqueue('b');
          for (const isA of arrivals) enqueue(isA ? 'a' : 'b');
          for (let i = 0; i < rounds * maxConcurrent; i++) {
            inFlight.shift()!();
            await settle();
          }
          expect(grants.a + grants.b).toBe(rounds * maxConcurrent);
          expect(Math.max(...differences)).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('keeps two always-waiting accounts within one slot of each other whatever order calls end in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 8 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 80 }),
        async (maxConcurrent, endings) => {
          const limiter = createConcurrencyLimiter({ maxConcurrent, maxQueue: 10_000, maxWaitMs: 60_000 });
          let inFlight: { account: string; release: () => void }[] = [];
          for (let i = 0; i < maxConcurrent; i++)
            inFlight.push({ account: 'other', release: granted(await limiter.acquire('other')) });
          const enqueue = (account: 'a' | 'b') =>
            void limiter.acquire(account).then((result) => {
              inFlight.push({ account, release: granted(result) });
              enqueue(account);
            });
          enqueue('a');
          enqueue('b');
          for (const pick of endings) {
            const ending = inFlight[pick % inFlight.length]!;
            inFlight = inFlight.filter((call) => call !== ending);
            ending.release();
            await settle();
            const count = (account: string) => inFlight.filter((call) => call.account === account).length;
            if (count('other') === 0) expect(Math.abs(count('a') - count('b'))).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
