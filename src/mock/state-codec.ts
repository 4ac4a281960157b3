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
import { newCustomerState } from './state.js';

/**
 * A tenant's state as JSON text, for worlds kept in a database (`world-store.ts`). Maps become arrays of
 * entries (their order is kept: it is creation order, which pruning and `lieferavisAbfrageNeu` rely on),
 * Sets arrays. Left out, because they follow from what is kept: each customer's contract (from the user
 * name) and the rendered PDFs (rendering is deterministic, so a PDF rendered again is byte for byte
 * the same).
 */

const FORMAT = 1;

interface TenantDocument {
  format: typeof FORMAT;
  counters: TenantState['counters'];
  /** Absent in documents written before the control surface: up. */
  down?: boolean;
  customers: CustomerDocument[];
}

interface CustomerDocument {
  customerId: string;
  ordersPlaced: number;
  orders: [string, StoredOrder][];
  pendingOrders: string[];
  notices: [string, StoredNotice][];
  documents: [string, DocumentSource][];
  announcements: [string, StoredAnnouncement][];
  returnedUnits: [string, BookedReturns][];
  takeBackOffers: [string, StoredTakeBackOffer][];
}

export function encodeTenant(tenant: TenantState): string {
  const document: TenantDocument = {
    format: FORMAT,
    counters: tenant.counters,
    ...(tenant.down ? { down: true } : {}),
    customers: [...tenant.customers.values()].map((c) => ({
      customerId: c.customerId,
      ordersPlaced: c.ordersPlaced,
      orders: [...c.orders],
      pendingOrders: [...c.pendingOrders],
      notices: [...c.notices],
      documents: [...c.documents],
      announcements: [...c.announcements],
      returnedUnits: [...c.returnedUnits],
      takeBackOffers: [...c.takeBackOffers],
    })),
  };
  return JSON.stringify(document);
}

export function decodeTenant(name: string, text: string): TenantState {
  const document = JSON.parse(text) as TenantDocument;
  if (document.format !== FORMAT) {
    throw new Error(`sandbox state of tenant "${name}" has format ${document.format}, expected ${FORMAT}`);
  }
  const customers = new Map<string, CustomerState>();
  for (const c of document.customers) {
    customers.set(c.customerId, {
      ...newCustomerState(c.customerId),
      ordersPlaced: c.ordersPlaced,
      orders: new Map(c.orders),
      pendingOrders: new Set(c.pendingOrders),
      notices: new Map(c.notices),
      documents: new Map(c.documents),
      announcements: new Map(c.announcements),
      returnedUnits: new Map(c.returnedUnits),
      takeBackOffers: new Map(c.takeBackOffers),
    });
  }
  return { name, customers, counters: { ...document.counters }, down: document.down === true };
}
