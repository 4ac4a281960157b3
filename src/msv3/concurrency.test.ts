import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, type SlotResult } from './concurrency.js';

function granted(result: SlotResult): () => void {
  if (!result.ok) throw new Error(`expected a slot, got ${result.cause}`);
  return result.release;
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
    expect(await limiter.acquire()).toEqual({ ok: false, cause: 'queue_full' });
    release();
    granted(await waiting);
  });

  it('gives up after the maximum wait and leaves the queue', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 30 });
    const release = granted(await limiter.acquire());
    expect(await limiter.acquire()).toEqual({ ok: false, cause: 'wait_timeout' });
    expect(limiter.queued).toBe(0);
    release();
    expect(limiter.active).toBe(0);
  });

  it('leaves the queue when the caller aborts', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 5_000 });
    granted(await limiter.acquire());
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort();
    expect(await waiting).toEqual({ ok: false, cause: 'aborted' });
    expect(limiter.queued).toBe(0);
    expect(await limiter.acquire(AbortSignal.abort())).toEqual({ ok: false, cause: 'aborted' });
  });

  it('ignores a second release of the same slot', async () => {
    const limiter = createConcurrencyLimiter({ maxConcurrent: 2, maxQueue: 0, maxWaitMs: 10 });
    const release = granted(await limiter.acquire());
    granted(await limiter.acquire());
    release();
    release();
    expect(limiter.active).toBe(1);
  });
});
