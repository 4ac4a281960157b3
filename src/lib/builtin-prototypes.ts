/**
 * Puts the built-in prototypes back into V8's fast mode once start-up has loaded every module.
 *
 * A module that subclasses a built-in turns that built-in's prototype into a dictionary as it loads
 * (ioredis's `class VerbatimString extends String` does so to `String.prototype`). V8 turns it back into
 * fast mode only when an inline cache next misses on it, and under load that happens after the
 * hottest functions have been optimised: the SOAP decoder's string scanning was compiled while
 * `String.prototype` was a dictionary, so every `indexOf`, `slice` and `endsWith` in it stayed a generic
 * property lookup for the life of the process (docs/performance.md "Built-in prototypes").
 *
 * What V8 does, from JavaScript: a property load that misses on an object whose prototype chain holds
 * a dictionary-mode prototype makes that prototype fast. The load must run often enough for V8 to give
 * its function feedback (lazy feedback allocation) and its inline cache a second miss.
 */
const PROTOTYPES: readonly object[] = [
  Object.prototype,
  Function.prototype,
  String.prototype,
  Number.prototype,
  Array.prototype,
  Promise.prototype,
  Map.prototype,
  Set.prototype,
  RegExp.prototype,
  Error.prototype,
  Uint8Array.prototype,
];

/** Loads that make V8 allocate feedback and then miss twice; far more than its thresholds. */
const PROBES = 32;

export function settleBuiltinPrototypes(): void {
  for (const prototype of PROTOTYPES) missOnce(prototype);
}

function missOnce(prototype: object): void {
  function Holder(): void {}
  Holder.prototype = prototype;
  const receiver = new (Holder as unknown as new () => Record<string, unknown>)();
  for (let i = 0; i < PROBES; i++) probe(receiver);
}

function probe(receiver: Record<string, unknown>): unknown {
  return receiver.__settle_prototypes__;
}
