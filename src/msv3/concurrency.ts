import type { StopNotice } from './stop-notice.js';

/**
 * Caps the calls in flight to one wholesaler endpoint (docs/resilience.md "Overload"). Callers beyond the
 * cap wait in a bounded queue for a bounded time, one FIFO queue per gateway account: when a slot frees,
 * it goes to the waiting account with the fewest calls in flight, ties to the one granted least recently
 * (round-robin), so an account may use every slot while alone but cannot hold them against others.
 * A caller is refused at once, without queueing, when the queue is full or when its estimated wait (the
 * grants ahead of it under that rule, over the cap, times the mean slot hold time) exceeds the deadline;
 * every refusal says when a retry is worth it (`retryAfterMs`: the whole queue's estimated drain time).
 */
export interface ConcurrencyOptions {
  maxConcurrent: number;
  /** Waiters of all accounts together. */
  maxQueue: number;
  maxWaitMs: number;
  /**
   * Longest time a refusal is held before it is answered (0: at once). A caller refused because the
   * queue is full or too long is answered after the queue's estimated drain time, at most this long, and
   * told to retry after the rest: a client that retries at once then retries at the pace the queue
   * drains, instead of flooding the process with refusals that delay the wholesaler's answers.
   */
  maxRefusalHoldMs?: number;
  /** Milliseconds, monotonic; default `performance.now`. */
  now?: () => number;
}

export type RefusalCause = 'queue_full' | 'wait_too_long' | 'wait_timeout';

type Refusal = { ok: false; cause: RefusalCause; retryAfterMs: number };

export type SlotResult = { ok: true; release: () => void } | { ok: false; cause: 'aborted' } | Refusal;

export interface ConcurrencyLimiter {
  /**
   * `account`: whose share the call counts against (one shared share when absent). The wait ends as
   * `aborted` when `signal` aborts or `stop` (the gateway's shutdown) comes.
   */
  acquire(account?: string, signal?: AbortSignal, stop?: StopNotice): Promise<SlotResult>;
  readonly active: number;
  readonly queued: number;
  /** Mean time a slot is held (EWMA), ms; undefined before the first release. */
  readonly meanHoldMs: number | undefined;
}

/** Weight of the newest hold time in the mean: about the last ten calls count. */
const EWMA_WEIGHT = 0.2;
const NO_ACCOUNT = '';

interface Waiter {
  /** False once granted, timed out or aborted: left in its queue and skipped (no search on leaving). */
  waiting: boolean;
  grant(): void;
}

interface AccountState {
  inFlight: number;
  /** FIFO; `head` is the first entry still to look at. */
  queue: Waiter[];
  head: number;
  /** Waiters still waiting. */
  waiting: number;
  /** Sequence number of the last grant (round-robin among equals); 0: never. */
  lastGrant: number;
}

export function createConcurrencyLimiter(options: ConcurrencyOptions): ConcurrencyLimiter {
  const { maxConcurrent, maxQueue, maxWaitMs } = options;
  const now = options.now ?? (() => performance.now());
  if (!(maxConcurrent >= 1)) throw new RangeError('maxConcurrent must be at least 1');
  let active = 0;
  let queued = 0;
  let grants = 0;
  let meanHoldMs: number | undefined;
  const accounts = new Map<string, AccountState>();
  /** Accounts with at least one waiter: the candidates for a freed slot. */
  const waitingAccounts = new Set<AccountState>();

  function stateOf(account: string): AccountState {
    let state = accounts.get(account);
    if (state === undefined) {
      state = { inFlight: 0, queue: [], head: 0, waiting: 0, lastGrant: 0 };
      accounts.set(account, state);
    }
    return state;
  }

  function forgetIfIdle(account: string, state: AccountState): void {
    if (state.inFlight === 0 && state.waiting === 0) accounts.delete(account);
  }

  function slot(account: string, state: AccountState): SlotResult {
    let released = false;
    const grantedAt = now();
    state.inFlight++;
    state.lastGrant = ++grants;
    return {
      ok: true,
      release() {
        if (released) return;
        released = true;
        const held = now() - grantedAt;
        meanHoldMs = meanHoldMs === undefined ? held : meanHoldMs + EWMA_WEIGHT * (held - meanHoldMs);
        state.inFlight--;
        forgetIfIdle(account, state);
        // The slot passes straight to the next waiter, so `active` stays the same.
        if (!grantNext()) active--;
      },
    };
  }

  /** Hands a free slot to the next waiter by the fairness rule; false when nobody waits. */
  function grantNext(): boolean {
    let best: AccountState | undefined;
    for (const state of waitingAccounts) {
      if (
        best === undefined ||
        state.inFlight < best.inFlight ||
        (state.inFlight === best.inFlight && state.lastGrant < best.lastGrant)
      )
        best = state;
    }
    if (best === undefined) return false;
    const waiter = takeFirst(best);
    waiter.grant();
    return true;
  }

  function takeFirst(state: AccountState): Waiter {
    let waiter = state.queue[state.head++];
    while (waiter !== undefined && !waiter.waiting) waiter = state.queue[state.head++];
    if (waiter === undefined) throw new Error('concurrency limiter: waiting count out of step');
    leave(state, waiter);
    return waiter;
  }

  function leave(state: AccountState, waiter: Waiter): void {
    waiter.waiting = false;
    state.waiting--;
    queued--;
    if (state.waiting === 0) {
      waitingAccounts.delete(state);
      state.queue = [];
      state.head = 0;
    } else if (state.head > 64 && state.head * 2 > state.queue.length) {
      state.queue = state.queue.slice(state.head);
      state.head = 0;
    }
  }

  /** Grants a newcomer of `state` would wait for: its own queue, and each other account's up to one more. */
  function grantsAhead(state: AccountState | undefined): number {
    const own = state?.waiting ?? 0;
    let ahead = own;
    for (const other of waitingAccounts) if (other !== state) ahead += Math.min(other.waiting, own + 1);
    return ahead;
  }

  /** Estimated time until `grants` more slots have freed up. */
  function drainMs(grantsNeeded: number): number {
    return meanHoldMs === undefined ? 0 : (grantsNeeded / maxConcurrent) * meanHoldMs;
  }

  function refusal(cause: RefusalCause): Refusal {
    return { ok: false, cause, retryAfterMs: drainMs(queued) };
  }

  /** A refusal of a newcomer, held for its share of the drain time (see `maxRefusalHoldMs`). */
  function heldRefusal(
    cause: RefusalCause,
    signal: AbortSignal | undefined,
    stop: StopNotice | undefined,
  ): Promise<SlotResult> {
    const refused = refusal(cause);
    const holdMs = Math.min(refused.retryAfterMs, options.maxRefusalHoldMs ?? 0);
    if (holdMs <= 0) return Promise.resolve(refused);
    return new Promise<SlotResult>((resolve) => {
      const done = (result: SlotResult) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        stop?.unlisten(stopListening);
        resolve(result);
      };
      const onAbort = () => done({ ok: false, cause: 'aborted' });
      const timer = setTimeout(
        () => done({ ...refused, retryAfterMs: refused.retryAfterMs - holdMs }),
        holdMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      const stopListening = stop?.listen(onAbort);
    });
  }

  return {
    get active() {
      return active;
    },
    get queued() {
      return queued;
    },
    get meanHoldMs() {
      return meanHoldMs;
    },

    acquire(account = NO_ACCOUNT, signal, stop) {
      if (signal?.aborted || stop?.stopped) return Promise.resolve({ ok: false, cause: 'aborted' });
      if (active < maxConcurrent && queued === 0) {
        active++;
        return Promise.resolve(slot(account, stateOf(account)));
      }
      if (queued >= maxQueue) return heldRefusal('queue_full', signal, stop);
      const known = accounts.get(account);
      if (drainMs(grantsAhead(known) + 1) > maxWaitMs) return heldRefusal('wait_too_long', signal, stop);

      const state = known ?? stateOf(account);
      return new Promise<SlotResult>((resolve) => {
        const end = (cause: 'wait_timeout' | 'aborted') => {
          if (!waiter.waiting) return;
          leave(state, waiter);
          forgetIfIdle(account, state);
          cleanUp();
          resolve(cause === 'aborted' ? { ok: false, cause } : refusal(cause));
        };
        const onAbort = () => end('aborted');
        const timer = setTimeout(() => end('wait_timeout'), maxWaitMs);
        const cleanUp = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          stop?.unlisten(stopListening);
        };
        const waiter: Waiter = {
          waiting: true,
          grant() {
            cleanUp();
            resolve(slot(account, state));
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const stopListening = stop?.listen(onAbort);
        state.queue.push(waiter);
        state.waiting++;
        queued++;
        waitingAccounts.add(state);
      });
    },
  };
}
