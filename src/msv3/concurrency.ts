/** Caps the calls in flight to one wholesaler; extra callers wait in a bounded FIFO queue for a bounded time. */
export interface ConcurrencyOptions {
  maxConcurrent: number;
  maxQueue: number;
  maxWaitMs: number;
}

export type SlotResult =
  | { ok: true; release: () => void }
  | { ok: false; cause: 'queue_full' | 'wait_timeout' | 'aborted' };

export interface ConcurrencyLimiter {
  acquire(signal?: AbortSignal): Promise<SlotResult>;
  readonly active: number;
  readonly queued: number;
}

interface Waiter {
  grant(): void;
}

export function createConcurrencyLimiter(options: ConcurrencyOptions): ConcurrencyLimiter {
  const { maxConcurrent, maxQueue, maxWaitMs } = options;
  if (!(maxConcurrent >= 1)) throw new RangeError('maxConcurrent must be at least 1');
  let active = 0;
  const queue: Waiter[] = [];

  function slot(): SlotResult {
    let released = false;
    return {
      ok: true,
      release() {
        if (released) return;
        released = true;
        const next = queue.shift();
        // The slot passes straight to the next waiter, so `active` stays the same.
        if (next) next.grant();
        else active--;
      },
    };
  }

  return {
    get active() {
      return active;
    },
    get queued() {
      return queue.length;
    },

    acquire(signal) {
      if (signal?.aborted) return Promise.resolve({ ok: false, cause: 'aborted' });
      if (active < maxConcurrent) {
        active++;
        return Promise.resolve(slot());
      }
      if (queue.length >= maxQueue) return Promise.resolve({ ok: false, cause: 'queue_full' });

      return new Promise<SlotResult>((resolve) => {
        const leave = (cause: 'wait_timeout' | 'aborted') => {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          cleanUp();
          resolve({ ok: false, cause });
        };
        const onAbort = () => leave('aborted');
        const timer = setTimeout(() => leave('wait_timeout'), maxWaitMs);
        const cleanUp = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        const waiter: Waiter = {
          grant() {
            cleanUp();
            resolve(slot());
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(waiter);
      });
    },
  };
}
