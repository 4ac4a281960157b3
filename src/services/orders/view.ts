import type { BestellungTyp, Msv3FaultInfo } from '../../msv3/model.js';
import type { OrderPart, Substitution } from '../../msv3/operations/anteile.js';
import {
  matchOrderAnswer,
  type PositionAnswer,
  type SubOrderAnswer,
} from '../../msv3/operations/bestellen.js';
import type { Bestellstatus } from '../../msv3/operations/bestellstatus-abfragen.js';
import type { AvailabilityPart } from '../../msv3/operations/verfuegbarkeit-anfragen.js';
import {
  type DeliveryPortion,
  type SubstitutionInfo,
  toDeliveryPortion,
  toSubstitution,
} from '../delivery-parts.js';
import type { OrderType } from '../order-types.js';
import {
  type DeliveryPreference,
  type OrderLine,
  orderTypeOf,
  type StoredOrderRequest,
  type StoredSubOrder,
  toMsv3OrderRequest,
} from './request.js';

/**
 * Order answers as JSON (docs/orders.md, docs/msv3.md "Orders", "Order status"). Answers are matched to
 * the request by sub-order Id and PZN with the codec's `matchOrderAnswer`, never by position. Delivery
 * parts use the same mapping as availability (`delivery-parts.ts`), with `tour_id`.
 */

export type OrderStatusValue = 'available' | 'expired' | 'unknown';

/**
 * What clients see of the placement: `partially_confirmed` when the wholesaler refused some sub-orders
 * (`Auftragsfehler`) and took the others; `outcome_unknown` while an attempt's answer is lost.
 */
export type PlacementStatus =
  | 'confirmed'
  | 'partially_confirmed'
  | 'queued_night_mode'
  | 'rejected'
  | 'outcome_unknown'
  | 'not_placed';

/**
 * A sub-order's answer: `confirmed`, `rejected` (its `Auftragsfehler` in `error`), `pending` (no answer
 * yet: night mode, or an open outcome), `unanswered` (the wholesaler's answer left it out), `dry_run`.
 */
type SubOrderStatus = 'confirmed' | 'rejected' | 'pending' | 'unanswered' | 'dry_run';

export interface OrderItemResult {
  pzn: string;
  quantity_ordered: number;
  /** Σ quantities of the parts that deliver (normal, network, backorder, special procurement). */
  quantity_confirmed: number;
  delivery_preference: DeliveryPreference;
  deliveries: DeliveryPortion[];
  /** Additive: what replaces the article, or null. */
  substitution: SubstitutionInfo | null;
  /** Additive: false when the wholesaler's answer has no line for this position (e.g. night mode). */
  answered: boolean;
  /** Additive, only for merged lines: the indexes of the sub-order's request items that share this PZN. */
  merged_from?: number[];
}

/** Wholesaler texts of an in-band `Auftragsfehler`. */
export interface Rejection {
  error_code: string;
  user_text: string;
  technical_text: string;
}

export interface SubOrderResult {
  /** `BestellungAuftrag/@Id`: delivery notices name it as `sub_order_id`. */
  sub_order_id: string;
  order_type: OrderType;
  /** The `Auftragskennung` sent. */
  requested_label: string;
  /** The `Auftragskennung` the wholesaler returned (it may replace ours); null before its answer. */
  order_label: string | null;
  container_id: string | null;
  status: SubOrderStatus;
  error: Rejection | null;
  items: OrderItemResult[];
}

export interface OrderResult {
  request_id: string;
  status: 'confirmed' | 'dry_run' | 'queued_night_mode';
  wholesaler: string;
  dry_run: boolean;
  /** Every position of every sub-order, in request order. */
  items: OrderItemResult[];
  /** Additive: the gateway order id for the order endpoints; absent for dry runs (nothing was placed). */
  order_id?: string;
  /** Additive: the first sub-order's returned `Auftragskennung`, or null. */
  order_label?: string | null;
  /** Additive: see `PlacementStatus`; absent for dry runs. */
  placement_status?: PlacementStatus;
  /** Additive: one per sub-order, in request order. */
  sub_orders: SubOrderResult[];
}

/** Part types that deliver something; the others (not deliverable, "not delivered, but …") do not. */
const DELIVERING: ReadonlySet<BestellungTyp> = new Set(['Normal', 'Verbund', 'Nachlieferung', 'Dispo']);

export const ORDER_STATUS: Record<Bestellstatus, OrderStatusValue> = {
  BestellantwortVerfuegbar: 'available',
  BestellantwortNichtVerfuegbar: 'expired',
  KennungUnbekannt: 'unknown',
};

/** Per sub-order Id and PZN: the answered position. */
function answeredPositions(
  bestellungId: string,
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[],
): Map<string, PositionAnswer> {
  const match = matchOrderAnswer(toMsv3OrderRequest(bestellungId, request, '-'), { subOrders: [...answer] });
  return new Map(match.matched.map((m) => [`${m.subOrderId}\0${m.requested.pzn}`, m.answered]));
}

function toRejection(error: Msv3FaultInfo): Rejection {
  return { error_code: error.errorCode, user_text: error.userText, technical_text: error.technicalText };
}

/** The sub-orders of an answer by Id, each with its rejection, if any. */
export function rejectionsOf(
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[],
): { subOrder: StoredSubOrder; rejection: Rejection }[] {
  return request.subOrders.flatMap((subOrder) => {
    const error = answer.find((a) => a.id === subOrder.id)?.error;
    return error === undefined ? [] : [{ subOrder, rejection: toRejection(error) }];
  });
}

/** The placement an answer gives: every sub-order refused is `rejected`, some `partially_confirmed`. */
export function placementOfAnswer(
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[],
): 'confirmed' | 'partially_confirmed' | 'rejected' {
  const rejected = rejectionsOf(request, answer).length;
  if (rejected === 0) return 'confirmed';
  return rejected === request.subOrders.length ? 'rejected' : 'partially_confirmed';
}

/**
 * Each sub-order with its answer. `answer` null: no answer yet, every sub-order `pending` (or, for a dry
 * run's forecast, pass the items and `dry_run`).
 */
export function subOrderResults(
  bestellungId: string,
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[] | null,
): SubOrderResult[] {
  const positions = answer === null ? new Map() : answeredPositions(bestellungId, request, answer);
  return request.subOrders.map((sub) => {
    const answered = answer?.find((a) => a.id === sub.id);
    const status: SubOrderStatus =
      answer === null
        ? 'pending'
        : answered === undefined
          ? 'unanswered'
          : answered.error
            ? 'rejected'
            : 'confirmed';
    return {
      ...subOrderHeader(sub),
      order_label: answered?.orderLabel ?? null,
      status,
      error: answered?.error === undefined ? null : toRejection(answered.error),
      items: sub.lines.map((line) => orderItem(line, positions.get(`${sub.id}\0${line.pzn}`))),
    };
  });
}

/** What a sub-order is, whatever became of it. */
export function subOrderHeader(
  sub: StoredSubOrder,
): Pick<SubOrderResult, 'sub_order_id' | 'order_type' | 'requested_label' | 'container_id'> {
  return {
    sub_order_id: sub.id,
    order_type: orderTypeOf(sub),
    requested_label: sub.orderLabel,
    container_id: sub.containerId ?? null,
  };
}

/** What an item is made from: a position of the order answer or, for a dry run, an availability article. */
export interface AnsweredLine {
  parts: readonly (OrderPart | AvailabilityPart)[];
  substitution?: Substitution;
}

/**
 * The JSON item of a request line. `quantity_confirmed` sums the parts whose type is in `confirming`
 * (those that deliver; a dry run counts those within the line's delivery_preference); `forOrders` adds
 * `tour_id` to the deliveries. Without an answer the item says `answered: false` and confirms nothing.
 */
export function orderItem(
  line: OrderLine,
  answered: AnsweredLine | undefined,
  confirming: ReadonlySet<BestellungTyp> = DELIVERING,
  forOrders = true,
): OrderItemResult {
  const item: OrderItemResult = {
    pzn: line.pzn,
    quantity_ordered: line.quantity,
    quantity_confirmed: 0,
    delivery_preference: line.preference,
    deliveries: [],
    substitution: null,
    answered: answered !== undefined,
  };
  if (answered !== undefined) {
    item.quantity_confirmed = confirmedOf(answered.parts, confirming);
    item.deliveries = answered.parts.map((part) => toDeliveryPortion(part, forOrders));
    item.substitution = toSubstitution(answered.substitution);
  }
  if (line.from.length > 1) item.merged_from = [...line.from];
  return item;
}

/** Σ quantities of the parts whose type confirms delivery. */
function confirmedOf(
  parts: readonly (OrderPart | AvailabilityPart)[],
  confirming: ReadonlySet<BestellungTyp> = DELIVERING,
): number {
  return parts
    .filter((part) => confirming.has(part.type))
    .reduce((sum, part) => sum + (part.quantity ?? 0), 0);
}
