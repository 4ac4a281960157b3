/**
 * The gateway's shutdown as the calls in flight wait for it: one listener on the shutdown signal tells
 * each of them. An AbortSignal walks its whole list of listeners on each add and each remove, so if
 * every call in flight listened to the signal itself (twice while it waits for a slot), each call would
 * pay for all the others under load: 3-4 % of a request's CPU at 32 connections (docs/performance.md
 * "Smaller steps").
 *
 * The listeners are a doubly linked list, added and removed in constant time. A `Set` of them made V8
 * move about 0.4 MB into the old generation at each young-generation collection under load, and so run
 * a full collection every half second; the list moves nothing there.
 */
export interface StopNotice {
  /** Whether the shutdown has begun. */
  readonly stopped: boolean;
  /**
   * `run` runs once when the shutdown begins, unless `unlisten` is called first with what this returns.
   * Once the shutdown has begun it never runs: check `stopped` first.
   */
  listen(run: () => void): StopListening;
  /** Forgets a listener; nothing happens if it has run or was forgotten already, or is undefined. */
  unlisten(listening: StopListening | undefined): void;
}

/** A listener's place in the list: what `listen` hands back for `unlisten`. */
class StopListening {
  prev: StopListening | null = null;
  next: StopListening | null = null;
  constructor(readonly run: () => void) {}
}

export function stopNotice(signal: AbortSignal): StopNotice {
  // A sentinel: the list is empty when it points to itself.
  const head = new StopListening(() => {});
  head.prev = head;
  head.next = head;
  const unlink = (node: StopListening | undefined) => {
    if (node === undefined || node.next === null || node.prev === null) return;
    node.prev.next = node.next;
    node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
  };
  signal.addEventListener(
    'abort',
    () => {
      // Each listener is unlinked before it runs, so one that forgets another (or itself) is safe.
      for (let node = head.next; node !== null && node !== head; node = head.next) {
        unlink(node);
        node.run();
      }
    },
    { once: true },
  );
  return {
    get stopped() {
      return signal.aborted;
    },
    listen(run) {
      const node = new StopListening(run);
      if (signal.aborted) return node;
      const last = head.prev!;
      node.prev = last;
      node.next = head;
      last.next = node;
      head.prev = node;
      return node;
    },
    unlisten: unlink,
  };
}
