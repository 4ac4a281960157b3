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
import {
  type DeliveryPreference,
  type OrderLine,
  type StoredOrderRequest,
  toMsv3OrderRequest,
} from './request.js';

/**
 * Order answers as JSON (docs/msv3.md "Orders", "Order status", plus additive fields). Answers are matched to
 * the request by sub-order Id and PZN with the codec's `matchOrderAnswer`, never by position. Delivery parts
 * use the same mapping as availability (`delivery-parts.ts`), with `tour_id`.
 */

type PlacementStatus = 'confirmed' | 'dry_run' | 'queued_night_mode';
export type OrderStatusValue = 'available' | 'expired' | 'unknown';

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
  /** Additive, only for merged lines: the indexes of the request items that share this PZN. */
  merged_from?: number[];
}

export interface OrderResult {
  request_id: string;
  status: PlacementStatus;
  wholesaler: string;
  dry_run: boolean;
  items: OrderItemResult[];
  /** Additive: the gateway order id for status queries; absent for dry runs (nothing was placed). */
  order_id?: string;
  /** Additive: the `Auftragskennung` the wholesaler returned (it may replace ours), or null. */
  order_label?: string | null;
}

/** Wholesaler texts of an in-band `Auftragsfehler`. */
export interface Rejection {
  error_code: string;
  user_text: string;
  technical_text: string;
}

/** Part types that deliver something; the others (not deliverable, "not delivered, but …") do not. */
const DELIVERING: ReadonlySet<BestellungTyp> = new Set(['Normal', 'Verbund', 'Nachlieferung', 'Dispo']);

export const ORDER_STATUS: Record<Bestellstatus, OrderStatusValue> = {
  BestellantwortVerfuegbar: 'available',
  BestellantwortNichtVerfuegbar: 'expired',
  KennungUnbekannt: 'unknown',
};

/** Per stored line: its answer (matched by sub-order Id and PZN), if the wholesaler gave one. */
function answersByLine(
  bestellungId: string,
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[],
): Map<OrderLine, PositionAnswer> {
  const msv3Request = toMsv3OrderRequest(bestellungId, request, '-');
  const match = matchOrderAnswer(msv3Request, { subOrders: [...answer] });
  const byPzn = new Map(match.matched.map((m) => [m.requested.pzn, m.answered]));
  const out = new Map<OrderLine, PositionAnswer>();
  for (const line of request.lines) {
    const answered = byPzn.get(line.pzn);
    if (answered !== undefined) out.set(line, answered);
  }
  return out;
}

/** The rejection of our sub-order, if the answer carries an `Auftragsfehler` for it. */
export function rejectionOf(
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[],
): Rejection | null {
  const sub = answer.find((a) => a.id === request.subOrder.id);
  return sub?.error === undefined ? null : toRejection(sub.error);
}

function toRejection(error: Msv3FaultInfo): Rejection {
  return { error_code: error.errorCode, user_text: error.userText, technical_text: error.technicalText };
}

/** The returned `Auftragskennung` of our sub-order. */
export function orderLabelOf(request: StoredOrderRequest, answer: readonly SubOrderAnswer[]): string | null {
  return answer.find((a) => a.id === request.subOrder.id)?.orderLabel ?? null;
}

export function orderItems(
  bestellungId: string,
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[],
): OrderItemResult[] {
  const answers = answersByLine(bestellungId, request, answer);
  return request.lines.map((line) => orderItem(line, answers.get(line)));
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
    item.quantity_confirmed = answered.parts
      .filter((part) => confirming.has(part.type))
      .reduce((sum, part) => sum + (part.quantity ?? 0), 0);
    item.deliveries = answered.parts.map((part) => toDeliveryPortion(part, forOrders));
    item.substitution = toSubstitution(answered.substitution);
  }
  if (line.from.length > 1) item.merged_from = [...line.from];
  return item;
}
