import type { Msv3Version } from '../msv3/envelope.js';
import type { Pzn } from '../msv3/model.js';
import type { OrderRequest, OrderResponse, SubOrderAnswer } from '../msv3/operations/bestellen.js';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import type { ReturnAnnouncementResponse } from '../msv3/operations/retourenavis-ankuendigen.js';
import type { TakeBackOfferResponse } from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import { type Contract, contractFor } from './contract.js';

/**
 * Everything the mock remembers, held by one object per server (`createWorld`): tenants (named by the
 * URL path before `/msv3`), inside them customers (the Basic-auth user name), inside them orders,
 * delivery notices, documents, return announcements and take-back offers. Nothing is persisted.
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
}

interface StoredNotice {
  notice: DeliveryNotice;
  createdAt: number;
  confirmed: boolean;
}

export type DocumentSource =
  | { kind: 'delivery-note'; deliveryNoteNumber: string }
  | { kind: 'return-slip'; announcementId: string; portion: number };

interface StoredTakeBackOffer {
  response: TakeBackOfferResponse;
  articles: { pzn: Pzn; quantity: number }[];
  requestedAt: number;
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
  orders: Map<string, StoredOrder>;
  /** Orders placed so far (repeats of a known Id not counted; never decreases). */
  ordersPlaced: number;
  /** Ids of night-mode orders not processed yet. */
  pendingOrders: Set<string>;
  /** By `Lieferscheinnummer`, in creation order. */
  notices: Map<string, StoredNotice>;
  documents: Map<string, DocumentSource>;
  /** Rendered PDFs by document id (rendering is deterministic, so the first rendering is kept). */
  renderedDocuments: Map<string, Buffer>;
  /** Binding return announcements by `@ID` (a repeated announcement gets the first answer). */
  announcements: Map<string, { response: ReturnAnnouncementResponse; announcedAt: number }>;
  /** Units accepted for return so far, by `Lieferscheinnummer` + PZN (see `BookedReturns`). */
  returnedUnits: Map<string, BookedReturns>;
  takeBackOffers: Map<string, StoredTakeBackOffer>;
}

export interface TenantState {
  name: string;
  customers: Map<string, CustomerState>;
  /** Running numbers for delivery notes, return references and take-back references. */
  counters: { deliveryNote: number; returnReference: number; takeBack: number; parcel: number };
}

export interface World {
  tenant(name: string): TenantState;
  customer(tenant: TenantState, customerId: string): CustomerState;
  tenants(): Iterable<TenantState>;
  findTenant(name: string): TenantState | undefined;
}

export function createWorld(): World {
  const tenants = new Map<string, TenantState>();
  return {
    tenant(name) {
      let t = tenants.get(name);
      if (t === undefined) {
        t = {
          name,
          customers: new Map(),
          counters: { deliveryNote: 0, returnReference: 0, takeBack: 0, parcel: 0 },
        };
        tenants.set(name, t);
      }
      return t;
    },
    customer(tenant, customerId) {
      let c = tenant.customers.get(customerId);
      if (c === undefined) {
        c = {
          customerId,
          contract: contractFor(customerId),
          orders: new Map(),
          ordersPlaced: 0,
          pendingOrders: new Set(),
          notices: new Map(),
          documents: new Map(),
          renderedDocuments: new Map(),
          announcements: new Map(),
          returnedUnits: new Map(),
          takeBackOffers: new Map(),
        };
        tenant.customers.set(customerId, c);
      }
      return c;
    },
    tenants: () => tenants.values(),
    findTenant: (name) => tenants.get(name),
  };
}

export function returnKey(deliveryNoteNumber: string, pzn: Pzn): string {
  return `${deliveryNoteNumber}|${pzn}`;
}
