import type { Msv3Version } from '../msv3/envelope.js';
import type { Pzn } from '../msv3/model.js';
import type { OrderRequest, OrderResponse, SubOrderAnswer } from '../msv3/operations/bestellen.js';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import type { ReturnAnnouncementResponse } from '../msv3/operations/retourenavis-ankuendigen.js';
import type { TakeBackOfferResponse } from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import { type Contract, contractFor } from './contract.js';
import { type RecordJournal, RecordMap } from './record-map.js';

/**
 * Everything the mock remembers: tenants (named by the URL path before `/msv3`), inside them customers
 * (the Basic-auth user name), inside them orders, delivery notices, documents, return announcements and
 * take-back offers. Where it is kept, in memory or in the gateway's database, is `world-store.ts`'s
 * business; the handlers change a `TenantState` in place, and set a record again when they changed it
 * (`record-map.ts`: that is how a persistent world knows what to write).
 */

export interface StoredOrder {
  id: string;
  supportId: number;
  version: Msv3Version;
  placedAt: number;
  request: OrderRequest;
  /** The answer `bestellen` gave; a repeated `bestellen` with the same Id gets exactly this again. */
  firstAnswer: OrderResponse;
  /** Night-mode orders are processed at this instant; day orders were processed when placed. */
  readyAt: number;
  /** The sub-order answers once processed (what `bestellstatusAbfragen` returns). */
  processed?: SubOrderAnswer[];
  /**
   * The `Lieferscheinnummer`s of the notices issued for this order, in creation order, so that finding
   * them does not read every notice of the customer. Absent in orders stored before it was kept.
   */
  noticeNumbers?: string[];
}

export interface StoredNotice {
  notice: DeliveryNotice;
  createdAt: number;
  confirmed: boolean;
}

export type DocumentSource =
  | { kind: 'delivery-note'; deliveryNoteNumber: string }
  | { kind: 'return-slip'; announcementId: string; portion: number };

export interface StoredTakeBackOffer {
  response: TakeBackOfferResponse;
  articles: { pzn: Pzn; quantity: number }[];
  requestedAt: number;
}

export interface StoredAnnouncement {
  response: ReturnAnnouncementResponse;
  announcedAt: number;
}

/**
 * Units of one delivery-note line (`Lieferscheinnummer` + PZN) accepted for return: `goods` for the
 * reasons that send delivered goods back, `claims` for `BerechnetNichtGeliefert` (invoiced but not
 * delivered), the only reason that may also cover the line's shortage units.
 */
export interface BookedReturns {
  goods: number;
  claims: number;
}

export interface CustomerState {
  customerId: string;
  contract: Contract;
  orders: RecordMap<StoredOrder>;
  /** Orders placed so far (repeats of a known Id not counted; never decreases). */
  ordersPlaced: number;
  /** Ids of night-mode orders not processed yet. */
  pendingOrders: Set<string>;
  /** By `Lieferscheinnummer`, in creation order. */
  notices: RecordMap<StoredNotice>;
  documents: RecordMap<DocumentSource>;
  /** Rendered PDFs by document id (rendering is deterministic, so the first rendering is kept). */
  renderedDocuments: Map<string, Buffer>;
  /** Binding return announcements by `@ID` (a repeated announcement gets the first answer). */
  announcements: RecordMap<StoredAnnouncement>;
  /** Units accepted for return so far, by `Lieferscheinnummer` + PZN (see `BookedReturns`). */
  returnedUnits: RecordMap<BookedReturns>;
  takeBackOffers: RecordMap<StoredTakeBackOffer>;
}

export interface TenantState {
  name: string;
  customers: Map<string, CustomerState>;
  /** Running numbers for delivery notes, return references and take-back references. */
  counters: { deliveryNote: number; returnReference: number; takeBack: number; parcel: number };
  /** Taken down through the control surface (`control.ts`): every SOAP request answers HTTP 503. */
  down: boolean;
  /** The records changed since the last save, in a persistent world; none in a memory world. */
  journal?: RecordJournal;
}

/**
 * What an operation does with the tenant's state: `none` (it needs only the customer's contract, which
 * follows from the user name), `read` (settling due orders may still change it), `write`.
 */
export type StateUse = 'none' | 'read' | 'write';

/** The tenants a server knows in this process, for the inspector (`inspect.ts`). */
export interface World {
  tenants(): Iterable<TenantState>;
  findTenant(name: string): TenantState | undefined;
}

export function newTenantState(name: string, journal?: RecordJournal): TenantState {
  return {
    name,
    customers: new Map(),
    counters: { deliveryNote: 0, returnReference: 0, takeBack: 0, parcel: 0 },
    down: false,
    ...(journal === undefined ? {} : { journal }),
  };
}

/** A customer with nothing stored yet (its contract follows from the user name). */
function newCustomerState(customerId: string, journal?: RecordJournal): CustomerState {
  return {
    customerId,
    contract: contractFor(customerId),
    orders: new RecordMap(customerId, 'order', journal),
    ordersPlaced: 0,
    pendingOrders: new Set(),
    notices: new RecordMap(customerId, 'notice', journal),
    documents: new RecordMap(customerId, 'document', journal),
    renderedDocuments: new Map(),
    announcements: new RecordMap(customerId, 'announcement', journal),
    returnedUnits: new RecordMap(customerId, 'returned', journal),
    takeBackOffers: new RecordMap(customerId, 'take-back', journal),
  };
}

/** The tenant's customer, created on first use. */
export function customerOf(tenant: TenantState, customerId: string): CustomerState {
  let customer = tenant.customers.get(customerId);
  if (customer === undefined) {
    customer = newCustomerState(customerId, tenant.journal);
    tenant.customers.set(customerId, customer);
  }
  return customer;
}

export function returnKey(deliveryNoteNumber: string, pzn: Pzn): string {
  return `${deliveryNoteNumber}|${pzn}`;
}
