import { describe, expect, it } from 'vitest';
import {
  type ClusterRateLimiter,
  createClusterRateLimiter,
  type RateLimitBatch,
  serveClusterRateLimits,
} from './cluster.js';

const budgets = {
  test: { points: 4, windowSeconds: 30 },
  live: { points: 8, windowSeconds: 30 },
  auth_failures: { points: 3, windowSeconds: 30 },
};

/** Workers wired to one primary as src/cluster/ wires them, the IPC hop replaced by a function call. */
function cluster(workers: number) {
  const primary = serveClusterRateLimits(budgets);
  const batches: RateLimitBatch[] = [];
  const limiters: ClusterRateLimiter[] = [];
  for (let i = 0; i < workers; i++) {
    const limiter = createClusterRateLimiter(budgets, (batch) => {
      batches.push(structuredClone(batch));
      void primary.answer(batch).then((decisions) => {
        limiter.receive(structuredClone({ type: 'rate-limit-answers', batch: batch.batch, decisions }));
      });
    });
    limiters.push(limiter);
  }
  return { limiters, batches };
}

describe('cluster rate limits', () => {
  it('sends the asks of one turn as one message and answers each in the order asked', async () => {
    const { limiters, batches } = cluster(1);
    const decisions = await Promise.all([1, 2, 3, 4, 5].map(() => limiters[0]!.consume('key', 'test')));
    expect(batches).toHaveLength(1);
    expect(batches[0]!.asks).toHaveLength(5);
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
  });

  it("holds one key's budget across workers, each turn a message of its own", async () => {
    const { limiters, batches } = cluster(2);
    const allowed: boolean[] = [];
    for (let i = 0; i < 10; i++) allowed.push((await limiters[i % 2]!.consume('shared', 'live')).allowed);
    expect(allowed.filter(Boolean)).toHaveLength(8);
    expect(allowed.slice(8)).toEqual([false, false]);
    expect(batches).toHaveLength(10);
  });

  it('peeks without using a point', async () => {
    const { limiters } = cluster(1);
    const limiter = limiters[0]!;
    await limiter.consume('address', 'auth_failures');
    const peeked = await limiter.peek('address', 'auth_failures');
    expect(peeked).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    expect((await limiter.peek('address', 'auth_failures')).remaining).toBe(2);
  });

  it('counts in its own memory when the primary does not answer in time, and drops the late answer', async () => {
    const sent: RateLimitBatch[] = [];
    const limiter = createClusterRateLimiter(budgets, (batch) => sent.push(batch), { timeoutMs: 20 });
    const first = await limiter.consume('silent', 'test');
    expect(first).toMatchObject({ allowed: true, remaining: 3 });
    // The primary's answer arrives after the worker counted the ask itself: it changes nothing.
    const late = { allowed: false, limit: 4, remaining: 0, resetSeconds: 30 };
    expect(() =>
      limiter.receive({ type: 'rate-limit-answers', batch: sent[0]!.batch, decisions: [late] }),
    ).not.toThrow();
    expect(await limiter.peek('silent', 'test')).toMatchObject({ allowed: true, remaining: 3 });
    expect(sent.map((batch) => batch.asks[0]!.op)).toEqual(['consume', 'peek']);
  });

  it('counts in its own memory at once when the message cannot be sent', async () => {
    const limiter = createClusterRateLimiter(budgets, () => {
      throw new Error('channel closed');
    });
    const decisions = await Promise.all([limiter.consume('k', 'test'), limiter.consume('k', 'test')]);
    expect(decisions.map((d) => d.remaining)).toEqual([3, 2]);
  });

  it('counts an ask the answer leaves out in its own memory', async () => {
    const limiter = createClusterRateLimiter(budgets, (batch) =>
      setImmediate(() =>
        limiter.receive({
          type: 'rate-limit-answers',
          batch: batch.batch,
          decisions: [{ allowed: true, limit: 4, remaining: 1, resetSeconds: 9 }],
        }),
      ),
    );
    const [answered, missing] = await Promise.all([
      limiter.consume('a', 'test'),
      limiter.consume('b', 'test'),
    ]);
    expect(answered).toEqual({ allowed: true, limit: 4, remaining: 1, resetSeconds: 9 });
    expect(missing).toMatchObject({ allowed: true, remaining: 3 });
  });
});
