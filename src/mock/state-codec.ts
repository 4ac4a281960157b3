import type { SandboxRecord, SandboxRecordWrite } from '../store/sandbox-state.js';
import type { RecordJournal, RecordKind, RecordMap } from './record-map.js';
import type {
  BookedReturns,
  CustomerState,
  DocumentSource,
  StoredAnnouncement,
  StoredNotice,
  StoredOrder,
  StoredTakeBackOffer,
  TenantState,
} from './state.js';
import { customerOf, newTenantState } from './state.js';

/**
 * A tenant's state as JSON text, for worlds kept in a database (`world-store.ts`): a small head (the
 * counters, the up/down switch, and per customer the orders placed and the pending night orders) and one
 * record per order, notice, document, announcement, booked return and take-back offer, so that an
 * operation writes the head and the records it changed, not the tenant's whole history. Records come
 * back in the order they were first stored, which is each Map's creation order (pruning and
 * `lieferavisAbfrageNeu` rely on it). Left out, because they follow from what is kept: each customer's
 * contract (from the user name) and the rendered PDFs (rendering is deterministic, so a PDF rendered
 * again is byte for byte the same).
 *
 * Format 1 kept everything in the head; such a head is read, and written as format 2 with records on
 * the tenant's next save (`SandboxWrite.replaceAll`, `store/sandbox-state.ts`).
 */

const FORMAT = 2;
const WHOLE_STATE_FORMAT = 1;

/** Each record kind's map in a customer's state (and its field in a format 1 document). */
const RECORD_MAPS = {
  order: 'orders',
  notice: 'notices',
  document: 'documents',
  announcement: 'announcements',
  returned: 'returnedUnits',
  'take-back': 'takeBackOffers',
} as const satisfies Record<RecordKind, keyof CustomerState>;

interface HeadDocument {
  format: typeof FORMAT;
  counters: TenantState['counters'];
  /** Absent when up. */
  down?: boolean;
  customers: { customerId: string; ordersPlaced: number; pendingOrders: string[] }[];
}

interface WholeStateDocument {
  format: typeof WHOLE_STATE_FORMAT;
  counters: TenantState['counters'];
  down?: boolean;
  customers: {
    customerId: string;
    ordersPlaced: number;
    orders: [string, StoredOrder][];
    pendingOrders: string[];
    notices: [string, StoredNotice][];
    documents: [string, DocumentSource][];
    announcements: [string, StoredAnnouncement][];
    returnedUnits: [string, BookedReturns][];
    takeBackOffers: [string, StoredTakeBackOffer][];
  }[];
}

export function encodeHead(tenant: TenantState): string {
  const head: HeadDocument = {
    format: FORMAT,
    counters: tenant.counters,
    ...(tenant.down ? { down: true } : {}),
    customers: [...tenant.customers.values()].map((c) => ({
      customerId: c.customerId,
      ordersPlaced: c.ordersPlaced,
      pendingOrders: [...c.pendingOrders],
    })),
  };
  return JSON.stringify(head);
}

/** The records the journal names, as they are now. */
export function encodeChanges(journal: RecordJournal): SandboxRecordWrite[] {
  const writes: SandboxRecordWrite[] = [];
  for (const { map, key, change } of journal.entries()) {
    const base = { customerId: map.customerId, kind: map.kind, key, change };
    writes.push(change === 'deleted' ? base : { ...base, document: JSON.stringify(map.get(key)) });
  }
  return writes;
}

/**
 * The tenant from its head and records (in the order stored). With a journal, the state notes its
 * changes there. `wholeState`: the head was format 1; its records are all noted in the journal, and the
 * next save must replace every stored record.
 */
export function decodeTenant(
  name: string,
  headText: string,
  records: Iterable<SandboxRecord>,
  journal?: RecordJournal,
): { tenant: TenantState; wholeState: boolean } {
  const head = JSON.parse(headText) as HeadDocument | WholeStateDocument;
  if (head.format === WHOLE_STATE_FORMAT) {
    return { tenant: decodeWholeState(name, head, journal), wholeState: true };
  }
  if (head.format !== FORMAT) {
    throw new Error(
      `sandbox state of tenant "${name}" has format ${String((head as { format: unknown }).format)}, expected ${FORMAT}`,
    );
  }
  const tenant = headOnly(name, head, journal);
  for (const record of records) {
    const customer = customerOf(tenant, record.customerId);
    const map = recordsOf(customer, record.kind);
    if (map === undefined)
      throw new Error(`sandbox tenant "${name}" has a record of unknown kind "${record.kind}"`);
    map.restore([[record.key, JSON.parse(record.document)]]);
  }
  return { tenant, wholeState: false };
}

function headOnly(name: string, head: HeadDocument | WholeStateDocument, journal?: RecordJournal) {
  const tenant = newTenantState(name, journal);
  tenant.counters = { ...head.counters };
  tenant.down = head.down === true;
  for (const c of head.customers) {
    const customer = customerOf(tenant, c.customerId);
    customer.ordersPlaced = c.ordersPlaced;
    customer.pendingOrders = new Set(c.pendingOrders);
  }
  return tenant;
}

function decodeWholeState(name: string, head: WholeStateDocument, journal?: RecordJournal): TenantState {
  const tenant = headOnly(name, head, journal);
  for (const c of head.customers) {
    const customer = customerOf(tenant, c.customerId);
    // Set, not restored: noted in the journal, so that the next save writes them as records.
    for (const field of Object.values(RECORD_MAPS)) {
      const map = customer[field] as RecordMap<unknown>;
      for (const [key, value] of c[field]) map.set(key, value);
    }
  }
  return tenant;
}

function recordsOf(customer: CustomerState, kind: string): RecordMap<unknown> | undefined {
  return Object.hasOwn(RECORD_MAPS, kind) ? customer[RECORD_MAPS[kind as RecordKind]] : undefined;
}
