import { setTimeout as delay } from 'node:timers/promises';
import type { SandboxWrite, StoredSandboxTenant } from '../store/sandbox-state.js';
import { RecordJournal } from './record-map.js';
import { newTenantState, type StateUse, type TenantState, type World } from './state.js';
import { decodeTenant, encodeChanges, encodeHead } from './state-codec.js';

/**
 * Where the mock keeps its tenants. `memoryWorld`: in this process only (the standalone `msv3-gateway
 * mock`, tests). `persistentWorld`: in a store of JSON texts, per tenant a head with a version and one
 * record per order, notice, document, … (`state-codec.ts`; the gateway's database:
 * `store/sandbox-state.ts`), so the sandbox survives restarts and every gateway instance on one
 * database sees the same one.
 *
 * A persistent request loads the tenant (decoding only when another writer changed it), runs the
 * operation on it in memory, and, if that changed the state, saves the head and the records it changed
 * (`record-map.ts`) if the stored version is still the one it loaded (compare and set): a save costs
 * what the operation touched, however long the tenant's history. If another instance saved in between,
 * the operation runs again on the new state, and the answer sent is the one of the run that was saved,
 * so numbers are never given out twice. Requests for one tenant take turns within the process.
 */
export interface WorldStore extends World {
  /** Runs `answer` on the tenant's current state and keeps what it changed (`changed`). */
  update<T extends { changed: boolean }>(
    tenant: string,
    use: StateUse,
    answer: (state: TenantState) => Promise<T>,
  ): Promise<T>;
  /**
   * Whether the tenant was taken down through the control surface. Persistent worlds ask the store at
   * most once a second per tenant (`DOWN_CHECK_MS`): every request checks, and most need nothing else.
   */
  isDown(tenant: string): boolean | Promise<boolean>;
}

/** Tenants kept elsewhere, with a version each (implemented by `store/sandbox-state.ts`). */
export interface TenantStore {
  /**
   * The tenant's stored version, and its head and records (in the order first stored) unless that
   * version is `knownVersion` (the caller has it already); undefined when nothing is stored.
   */
  read(tenant: string, knownVersion?: number): Promise<StoredSandboxTenant | undefined>;
  /**
   * Stores the head and applies the record writes, all or nothing, if the stored version is still
   * `expectedVersion` (0: nothing stored yet); resolves to the new version, or undefined when another
   * writer came first.
   */
  write(tenant: string, change: SandboxWrite, expectedVersion: number): Promise<number | undefined>;
}

export function memoryWorld(): WorldStore {
  const tenants = new Map<string, TenantState>();
  return {
    tenants: () => tenants.values(),
    findTenant: (name) => tenants.get(name),
    isDown: (name) => tenants.get(name)?.down === true,
    update(name, _use, answer) {
      let tenant = tenants.get(name);
      if (tenant === undefined) {
        tenant = newTenantState(name);
        tenants.set(name, tenant);
      }
      return answer(tenant);
    },
  };
}

/** Runs of one request that lost to another instance's write, at most; then it fails (HTTP 500). */
const MAX_CONFLICTS = 20;
/** Failed reads or writes of one request (the database away for a moment), at most. */
const MAX_FAILURES = 3;
/** How long a tenant's up/down state, as last loaded, is taken as current (another instance may change it). */
const DOWN_CHECK_MS = 1_000;

interface Loaded {
  state: TenantState;
  journal: RecordJournal;
  version: number;
  /** The stored head was format 1 (everything in it): the next save replaces every stored record. */
  replaceAll: boolean;
}

function fresh(name: string): Loaded {
  const journal = new RecordJournal();
  return { state: newTenantState(name, journal), journal, version: 0, replaceAll: false };
}

export interface PersistentWorldOptions {
  /** Wait before retrying after a failed read or write, times the attempt (default 100 ms). */
  retryDelayMs?: number;
  /**
   * Milliseconds on a clock that always runs, for how old a tenant's up/down state is (default
   * `performance.now`: the mock's own clock may stand still); tests move their own.
   */
  elapsedMs?: () => number;
}

export function persistentWorld(store: TenantStore, options: PersistentWorldOptions = {}): WorldStore {
  const retryDelayMs = options.retryDelayMs ?? 100;
  const elapsedMs = options.elapsedMs ?? (() => performance.now());
  /** The tenants as last loaded or saved here; a tenant whose save failed or lost is dropped. */
  const cache = new Map<string, Loaded>();
  const turns = new Map<string, Promise<void>>();
  /** When each tenant was last loaded for `isDown`, in `elapsedMs`. */
  const downCheckedAt = new Map<string, number>();

  async function load(name: string): Promise<Loaded> {
    const cached = cache.get(name);
    const stored = await store.read(name, cached?.version);
    let loaded: Loaded;
    if (stored === undefined) {
      loaded = cached?.version === 0 ? cached : fresh(name);
    } else if (cached !== undefined && stored.version === cached.version) {
      loaded = cached;
    } else {
      const journal = new RecordJournal();
      const { tenant, wholeState } = decodeTenant(name, stored.head ?? '', stored.records ?? [], journal);
      loaded = { state: tenant, journal, version: stored.version, replaceAll: wholeState };
    }
    cache.set(name, loaded);
    return loaded;
  }

  async function attempt<T extends { changed: boolean }>(
    name: string,
    answer: (state: TenantState) => Promise<T>,
  ): Promise<T | undefined> {
    const loaded = await load(name);
    const result = await answer(loaded.state);
    if (!result.changed) return result;
    const change: SandboxWrite = {
      head: encodeHead(loaded.state),
      records: encodeChanges(loaded.journal),
      replaceAll: loaded.replaceAll,
    };
    const version = await store.write(name, change, loaded.version);
    if (version === undefined) return undefined;
    loaded.version = version;
    loaded.replaceAll = false;
    loaded.journal.clear();
    return result;
  }

  /** One request of a tenant at a time in this process: the next starts when the previous is saved. */
  function inTurn<T>(name: string, task: () => Promise<T>): Promise<T> {
    const previous = turns.get(name) ?? Promise.resolve();
    const run = previous.then(task);
    const done = run.then(
      () => {},
      () => {},
    );
    turns.set(name, done);
    void done.then(() => {
      if (turns.get(name) === done) turns.delete(name);
    });
    return run;
  }

  return {
    tenants: () => [...cache.values()].map((l) => l.state),
    findTenant: (name) => cache.get(name)?.state,
    async isDown(name) {
      const cached = cache.get(name);
      const checkedAt = downCheckedAt.get(name);
      if (cached !== undefined && checkedAt !== undefined && elapsedMs() - checkedAt < DOWN_CHECK_MS) {
        return cached.state.down;
      }
      let loaded: Awaited<ReturnType<typeof load>>;
      try {
        loaded = await inTurn(name, () => load(name));
      } catch {
        // The store is away: keep the state last seen (up when never seen), so the calls that need no
        // stored state (availability, contract data) still work, as they did before the switch existed.
        return cached?.state.down === true;
      }
      downCheckedAt.set(name, elapsedMs());
      return loaded.state.down;
    },
    update(name, use, answer) {
      // Availability and contract data need no stored state: no database round trip for them.
      if (use === 'none') return answer(cache.get(name)?.state ?? newTenantState(name));
      return inTurn(name, async () => {
        let conflicts = 0;
        let failures = 0;
        for (;;) {
          try {
            const result = await attempt(name, answer);
            if (result !== undefined) return result;
          } catch (error) {
            // The state in memory may be ahead of the stored one (a write that failed): load it again.
            cache.delete(name);
            if (++failures >= MAX_FAILURES) throw error;
            await delay(retryDelayMs * failures); // the store's back-off: it may be restarting
            continue;
          }
          // Another instance saved first: run again on its state, after a moment's jitter so that two
          // instances busy with one tenant do not keep colliding.
          cache.delete(name);
          if (++conflicts >= MAX_CONFLICTS) throw new Error(`the sandbox state of "${name}" kept changing`);
          await delay(Math.random() * 5 * conflicts);
        }
      });
    },
  };
}
