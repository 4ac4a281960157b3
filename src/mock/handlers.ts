import type { Pzn } from '../msv3/model.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../msv3/operations/bestellstatus-abfragen.js';
import { dokumentAbfragen } from '../msv3/operations/dokument-abfragen.js';
import { lieferavisAbfrageHist } from '../msv3/operations/lieferavis-abfrage-hist.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { lieferavisBestaetigen } from '../msv3/operations/lieferavis-bestaetigen.js';
import type { Msv3Operation } from '../msv3/operations/operation.js';
import { retourenavisAnfragen } from '../msv3/operations/retourenavis-anfragen.js';
import { retourenavisAnkuendigen } from '../msv3/operations/retourenavis-ankuendigen.js';
import { ruecknahmeangebotAnfordern } from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { verfuegbarkeitAnfragen } from '../msv3/operations/verfuegbarkeit-anfragen.js';
import { verfuegbarkeitAnfragenBulk } from '../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { vertragsdatenAbfragen } from '../msv3/operations/vertragsdaten-abfragen.js';
import { answerAvailability, answerBulkAvailability } from './availability.js';
import type { RequestContext } from './context.js';
import { contractData } from './contract.js';
import { confirmDeliveryNotices, deliveryNoticeHistory, newDeliveryNotices } from './deliveries.js';
import { fetchDocument } from './documents.js';
import { orderStatus, placeOrder } from './orders.js';
import { announceReturn, answerReturnEnquiry } from './returns.js';
import type { CustomerState, StateUse } from './state.js';
import { requestTakeBackOffer } from './take-back-offers.js';

/**
 * One handler per MSV3 operation, keyed by the request wrapper's local name. A handler gets the decoded
 * request and returns the response model (or throws a `MockFault`); encoding, faults and scenario effects
 * are the dispatcher's job.
 */
interface OperationHandler<Req, Res> {
  operation: Msv3Operation<Req, Res>;
  /** The PZNs a request names, to find transport scenarios (faults, delays, dropped connections). */
  pzns?(request: Req): Iterable<Pzn>;
  /** True when the request repeats one already answered (same id): it gets the stored answer, no scenario effects. */
  replays?(customer: CustomerState, request: Req): boolean;
  /**
   * What the operation does with the tenant's stored state: `none` (it needs only the contract, which
   * follows from the user name), `read` (the default), `write`. Persistent worlds (`world-store.ts`) load
   * nothing for `none` and save after `write` (and after a `read` that settled due orders).
   */
  state?: StateUse;
  handle(ctx: RequestContext, request: Req): Res | Promise<Res>;
}

function define<Req, Res>(handler: OperationHandler<Req, Res>): OperationHandler<Req, Res> {
  return handler;
}

const HANDLER_LIST = [
  define({ operation: verbindungTesten, state: 'none', handle: () => ({}) }),
  define({
    operation: verfuegbarkeitAnfragen,
    state: 'none',
    pzns: (r) => r.articles.map((a) => a.pzn),
    handle: answerAvailability,
  }),
  define({
    operation: verfuegbarkeitAnfragenBulk,
    state: 'none',
    pzns: (r) => (r.query.kind === 'list' ? r.query.pzns : []),
    handle: answerBulkAvailability,
  }),
  define({
    operation: bestellen,
    state: 'write',
    pzns: (r) => r.subOrders.flatMap((s) => s.positions.map((p) => p.pzn)),
    replays: (customer, r) => customer.orders.has(r.id),
    handle: placeOrder,
  }),
  define({ operation: bestellstatusAbfragen, handle: orderStatus }),
  define({
    operation: vertragsdatenAbfragen,
    state: 'none',
    handle: (ctx, r) => contractData(ctx.customer.contract, ctx.version, r, ctx.now, ctx.env.calendar),
  }),
  define({
    operation: ruecknahmeangebotAnfordern,
    state: 'write',
    pzns: (r) => r.articles.map((a) => a.pzn),
    replays: (customer, r) => customer.takeBackOffers.has(r.id),
    handle: requestTakeBackOffer,
  }),
  define({ operation: lieferavisAbfrageNeu, handle: (ctx) => newDeliveryNotices(ctx) }),
  define({ operation: lieferavisBestaetigen, state: 'write', handle: confirmDeliveryNotices }),
  define({ operation: lieferavisAbfrageHist, handle: deliveryNoticeHistory }),
  define({
    operation: retourenavisAnfragen,
    pzns: (r) => r.enquiry?.positions.map((p) => p.pzn) ?? [],
    handle: answerReturnEnquiry,
  }),
  define({
    operation: retourenavisAnkuendigen,
    state: 'write',
    pzns: (r) => r.announcement?.positions.map((p) => p.pzn) ?? [],
    replays: (customer, r) => r.announcement !== undefined && customer.announcements.has(r.announcement.id),
    handle: announceReturn,
  }),
  define({ operation: dokumentAbfragen, handle: fetchDocument }),
];

// biome-ignore lint/suspicious/noExplicitAny: the table holds handlers of every request/response type.
export type AnyOperationHandler = OperationHandler<any, any>;

export const HANDLERS: ReadonlyMap<string, AnyOperationHandler> = new Map(
  HANDLER_LIST.map((h) => [h.operation.name, h as AnyOperationHandler]),
);
