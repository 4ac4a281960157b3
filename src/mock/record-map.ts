/**
 * A customer's records (orders, notices, documents, …) as Maps that note which keys changed since the
 * tenant was last saved, so that a persistent world (`world-store.ts`) writes the records an operation
 * touched instead of the tenant's whole history.
 *
 * The rule for handlers: a stored record is changed by setting it again (`map.set(key, record)`), also
 * after changing the object in place; a record changed without `set` is not saved. Memory worlds keep no
 * journal, and their maps note nothing.
 */

import type { SandboxRecordWrite } from '../store/sandbox-state.js';

export type RecordKind = 'order' | 'notice' | 'document' | 'announcement' | 'returned' | 'take-back';

/**
 * What became of a key since the last save: `set` (new or changed), `deleted`, or `moved` (deleted and
 * set again: it goes after the ones stored, as in the Map).
 */
type RecordChange = SandboxRecordWrite['change'];

/** The changed keys of a tenant's record maps, per map, in the order they first changed. */
export class RecordJournal {
  readonly #changes = new Map<RecordMap<unknown>, Map<string, RecordChange>>();

  note(map: RecordMap<unknown>, key: string, change: 'set' | 'deleted'): void {
    let keys = this.#changes.get(map);
    if (keys === undefined) {
      keys = new Map();
      this.#changes.set(map, keys);
    }
    const before = keys.get(key);
    if (change === 'deleted') keys.set(key, 'deleted');
    else if (before === 'deleted') {
      // Last in the journal, as it is last in the Map: new records are stored in journal order.
      keys.delete(key);
      keys.set(key, 'moved');
    } else if (before === undefined) keys.set(key, 'set');
  }

  /** Every change, with the map it belongs to. */
  *entries(): Iterable<{ map: RecordMap<unknown>; key: string; change: RecordChange }> {
    for (const [map, keys] of this.#changes) {
      for (const [key, change] of keys) yield { map, key, change };
    }
  }

  get size(): number {
    let n = 0;
    for (const keys of this.#changes.values()) n += keys.size;
    return n;
  }

  clear(): void {
    this.#changes.clear();
  }
}

export class RecordMap<V> extends Map<string, V> {
  readonly customerId: string;
  readonly kind: RecordKind;
  readonly #journal: RecordJournal | undefined;

  constructor(customerId: string, kind: RecordKind, journal: RecordJournal | undefined) {
    super();
    this.customerId = customerId;
    this.kind = kind;
    this.#journal = journal;
  }

  override set(key: string, value: V): this {
    super.set(key, value);
    this.#journal?.note(this, key, 'set');
    return this;
  }

  override delete(key: string): boolean {
    const had = super.delete(key);
    if (had) this.#journal?.note(this, key, 'deleted');
    return had;
  }

  override clear(): void {
    for (const key of [...this.keys()]) this.delete(key);
  }

  /** Fills the map from stored records without noting them as changed. */
  restore(entries: Iterable<[string, V]>): this {
    for (const [key, value] of entries) super.set(key, value);
    return this;
  }
}
