import type { SandboxRecord } from '../../store/sandbox-state.js';
import type { TenantState } from '../state.js';
import type { TenantStore } from '../world-store.js';

/**
 * A `TenantStore` in this process, with the database store's semantics (compare and set, records in the
 * order first stored, `moved` and `replaceAll`), for tests of worlds that share a store.
 */
export function tenantStoreInMemory(): TenantStore {
  interface Row extends SandboxRecord {
    seq: number;
  }
  const tenants = new Map<string, { version: number; head: string; records: Map<string, Row> }>();
  let seq = 0;
  return {
    async read(tenant, knownVersion) {
      const stored = tenants.get(tenant);
      if (stored === undefined) return undefined;
      if (stored.version === knownVersion) return { version: stored.version };
      const records = [...stored.records.values()].sort((a, b) => a.seq - b.seq);
      return {
        version: stored.version,
        head: stored.head,
        records: records.map(({ customerId, kind, key, document }) => ({ customerId, kind, key, document })),
      };
    },
    async write(tenant, change, expectedVersion) {
      const stored = tenants.get(tenant);
      if ((stored?.version ?? 0) !== expectedVersion) return undefined;
      const records = new Map(change.replaceAll ? [] : stored?.records);
      for (const { customerId, kind, key, change: what, document } of change.records) {
        const id = JSON.stringify([customerId, kind, key]);
        if (what !== 'set') records.delete(id);
        if (what === 'deleted') continue;
        const seqOfRow = records.get(id)?.seq ?? ++seq;
        records.set(id, { customerId, kind, key, document: document!, seq: seqOfRow });
      }
      tenants.set(tenant, { version: expectedVersion + 1, head: change.head, records });
      return expectedVersion + 1;
    },
  };
}

/**
 * Everything a tenant keeps that is saved, as plain data with each Map's entries in order: two states
 * with equal snapshots are the same sandbox.
 */
export function snapshotOf(tenant: TenantState): unknown {
  return {
    counters: tenant.counters,
    down: tenant.down,
    customers: [...tenant.customers.values()].map((c) => ({
      customerId: c.customerId,
      ordersPlaced: c.ordersPlaced,
      pendingOrders: [...c.pendingOrders],
      orders: [...c.orders],
      notices: [...c.notices],
      documents: [...c.documents],
      announcements: [...c.announcements],
      returnedUnits: [...c.returnedUnits],
      takeBackOffers: [...c.takeBackOffers],
    })),
  };
}

/** The tenant as format 1 kept it: the whole state in one document, as earlier versions stored it. */
export function wholeStateDocument(tenant: TenantState): string {
  const snapshot = snapshotOf(tenant) as { counters: unknown; down: boolean; customers: unknown[] };
  const { down, ...rest } = snapshot;
  return JSON.stringify({ format: 1, ...rest, ...(down ? { down: true } : {}) });
}
