import type { Clock } from '../lib/clock.js';
import type { ApiKey } from '../store/api-keys.js';

/** Entries remembered at most by each of the structures below; the oldest goes first. */
const CACHE_MAX_KEYS = 10_000;

export interface ApiKeyCache {
  /** A private, mutable copy of the record, or undefined when absent or older than the TTL. */
  get(hash: string): ApiKey | undefined;
  /** Remembers a copy of `key` and returns the record to use (the copy, or `key` without caching). */
  set(hash: string, key: ApiKey): ApiKey;
}

/** Found keys by SHA-256 for `ttlMs` (a no-op cache when 0), at most CACHE_MAX_KEYS. */
export function createApiKeyCache(clock: Clock, ttlMs: number): ApiKeyCache {
  if (ttlMs <= 0) return { get: () => undefined, set: (_hash, key) => key };
  const entries = new Map<string, { key: ApiKey; expiresAt: number }>();
  return {
    get(hash) {
      const entry = entries.get(hash);
      if (entry === undefined) return undefined;
      if (clock.now() >= entry.expiresAt) {
        entries.delete(hash);
        return undefined;
      }
      return entry.key;
    },
    set(hash, key) {
      const copy = { ...key };
      remember(entries, hash, { key: copy, expiresAt: clock.now() + ttlMs });
      return copy;
    },
  };
}

/** A bounded set of key hashes, each forgotten `ttlMs` after it was added (never, without a TTL). */
export interface HashSet {
  has(hash: string): boolean;
  add(hash: string): void;
  delete(hash: string): void;
}

export function createHashSet(clock: Clock, ttlMs = Number.POSITIVE_INFINITY): HashSet {
  const expiries = new Map<string, number>();
  return {
    has(hash) {
      const expiresAt = expiries.get(hash);
      if (expiresAt === undefined) return false;
      if (clock.now() < expiresAt) return true;
      expiries.delete(hash);
      return false;
    },
    add: (hash) => remember(expiries, hash, clock.now() + ttlMs),
    delete: (hash) => {
      expiries.delete(hash);
    },
  };
}

/** Sets `hash` as the newest entry, dropping the oldest beyond CACHE_MAX_KEYS. */
function remember<T>(entries: Map<string, T>, hash: string, value: T): void {
  entries.delete(hash);
  if (entries.size >= CACHE_MAX_KEYS) entries.delete(entries.keys().next().value as string);
  entries.set(hash, value);
}
