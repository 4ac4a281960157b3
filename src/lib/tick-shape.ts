import { executionAsyncResource } from 'node:async_hooks';

/** The tick kept; null from the first call until that tick has run. */
let pinned: object | null | undefined;

/**
 * Keeps one of Node's tick objects alive for the life of the process, so that `process.nextTick` stays
 * cheap in optimised code.
 *
 * Node builds every tick as an object literal with computed keys (`{ [async_id_symbol]: …,
 * [trigger_async_id_symbol]: …, callback, args }`). For each property of such a literal V8 remembers the
 * hidden class (map) the object had before it, and on the first other map it gives up for good
 * ("megamorphic"): optimised code then adds those properties through V8's runtime, about 1,300
 * instructions each, three or four per tick. The other map comes from a full garbage collection at a
 * moment when no tick is pending: it frees the tick objects' maps, and the next tick makes new ones. At
 * start-up, with few ticks and several full collections, that happened in most gateway processes and
 * cost about 30 K instructions per availability request (docs/performance.md "Node's own ticks"). A
 * live tick object keeps its maps alive, and with them the ones V8 remembered.
 *
 * Call before start-up work; later calls do nothing.
 */
export function pinTickShape(): void {
  if (pinned !== undefined) return;
  pinned = null;
  // Inside a tick's callback the current asynchronous resource is that tick object.
  process.nextTick(() => {
    pinned = executionAsyncResource();
  });
}
