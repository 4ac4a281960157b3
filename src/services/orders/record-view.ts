import type { SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import type { OrderFillRow, OrderLineRow } from '../../store/order-lines.js';
import type { OrderHistoryRow } from '../../store/order-listing.js';
import type { StoredOrder } from '../../store/orders.js';
import { storedRequestOf } from './request.js';
import { type AnswerStatus, answerStatusOf } from './status-view.js';
import {
  type OrderItemResult,
  type OrderStatusValue,
  type PlacementStatus,
  type SubOrderResult,
  subOrderResults,
} from './view.js';

/**
 * The stored order as `GET /v1/orders/{order_id}` shows it, without asking the wholesaler (docs/orders.md
 * "The order record"): the request and the answer per sub-order, the status history, and what arrived
 * per line (delivered, short, the delivery notes with batch and expiry of each delivered part). Also the
 * `data` of `order.fulfilled`.
 */

interface DeliveredPartJson {
  tracking_number: string;
  quantity: number;
  /** The PZN the note printed: a substitute when the wholesaler delivered one. */
  pzn: string;
  batch: string | null;
  expiry_date: string | null;
  parcel_number: string | null;
  /** `YYYY-MM-DD`, the note's date. */
  date: string;
  /** True when the note named no sub-order and the part was matched by label, tour and date. */
  inferred: boolean;
}

interface ShortPartJson {
  tracking_number: string;
  quantity: number;
  date: string;
  inferred: boolean;
}

type RecordItemJson = Omit<OrderItemResult, 'quantity_confirmed'> & {
  /** Null until the wholesaler answered. */
  quantity_confirmed: number | null;
  quantity_delivered: number;
  quantity_short: number;
  /** Delivery notes that carried this line, oldest first. */
  tracking_numbers: string[];
  delivered: DeliveredPartJson[];
  shortages: ShortPartJson[];
};

type RecordSubOrderJson = Omit<SubOrderResult, 'items'> & { items: RecordItemJson[] };

/**
 * `waiting`: no answer yet; `open`: answered, goods outstanding; `fulfilled`: every line delivered or
 * reported short; `none`: nothing to deliver (rejected, not placed).
 */
type FulfilmentState = 'waiting' | 'open' | 'fulfilled' | 'none';

interface FulfilmentJson {
  status: FulfilmentState;
  fulfilled_at: string | null;
  quantity_ordered: number;
  quantity_confirmed: number;
  quantity_delivered: number;
  quantity_short: number;
}

export interface OrderRecordJson {
  order_id: string;
  request_id: string;
  wholesaler: string;
  created_at: string;
  updated_at: string;
  placement_status: PlacementStatus;
  /** The last MSV3 status the gateway saw, null if none yet. */
  status: OrderStatusValue | null;
  answer_status: AnswerStatus | null;
  fulfilment: FulfilmentJson;
  sub_orders: RecordSubOrderJson[];
  history: { at: string; placement_status: PlacementStatus; status: OrderStatusValue | null }[];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function orderRecordJson(
  order: StoredOrder,
  lines: readonly OrderLineRow[],
  fills: readonly OrderFillRow[],
  history: readonly OrderHistoryRow[],
): OrderRecordJson {
  const request = storedRequestOf(order.request);
  const answered = order.state === 'confirmed' || order.state === 'rejected';
  const results = subOrderResults(
    order.bestellungId,
    request,
    answered ? (order.answer as SubOrderAnswer[]) : null,
  );
  const lineOf = new Map(lines.map((line) => [`${line.sub_order_id}\0${line.pzn}`, line]));
  const sub_orders = results.map((sub) => ({
    ...sub,
    items: sub.items.map((item) => {
      const key = `${sub.sub_order_id}\0${item.pzn}`;
      return recordItem(
        item,
        lineOf.get(key),
        fills.filter((f) => `${f.sub_order_id}\0${f.pzn}` === key),
        answered,
      );
    }),
  }));
  const placement = (order.placementStatus ?? 'outcome_unknown') as PlacementStatus;
  const status = order.lastStatus as OrderStatusValue | null;
  return {
    order_id: order.id,
    request_id: order.bestellungId,
    wholesaler: order.wholesaler,
    created_at: iso(order.createdAt),
    updated_at: iso(order.updatedAt),
    placement_status: placement,
    status,
    answer_status: answerStatusOf(order.state, status),
    fulfilment: fulfilmentOf(order, placement, sub_orders),
    sub_orders,
    history: history.map((h) => ({
      at: iso(h.at),
      placement_status: h.placement_status as PlacementStatus,
      status: h.status as OrderStatusValue | null,
    })),
  };
}

function recordItem(
  item: OrderItemResult,
  line: OrderLineRow | undefined,
  fills: readonly OrderFillRow[],
  answered: boolean,
): RecordItemJson {
  const delivered = fills.filter((f) => f.kind === 'delivered');
  const short = fills.filter((f) => f.kind === 'short');
  return {
    ...item,
    quantity_confirmed: answered ? item.quantity_confirmed : null,
    quantity_delivered: line?.quantity_delivered ?? 0,
    quantity_short: line?.quantity_short ?? 0,
    tracking_numbers: [...new Set(fills.map((f) => f.tracking_number))],
    delivered: delivered.map((f) => ({
      tracking_number: f.tracking_number,
      quantity: f.quantity,
      pzn: f.delivered_pzn,
      batch: f.batch,
      expiry_date: f.expiry_date,
      parcel_number: f.parcel_number,
      date: f.document_date,
      inferred: f.inferred === 1,
    })),
    shortages: short.map((f) => ({
      tracking_number: f.tracking_number,
      quantity: f.quantity,
      date: f.document_date,
      inferred: f.inferred === 1,
    })),
  };
}

function fulfilmentOf(
  order: StoredOrder,
  placement: PlacementStatus,
  subOrders: readonly RecordSubOrderJson[],
): FulfilmentJson {
  const items = subOrders.flatMap((sub) => sub.items);
  const sum = (pick: (item: RecordItemJson) => number) =>
    items.reduce((total, item) => total + pick(item), 0);
  const status: FulfilmentState =
    order.fulfilledAt !== null
      ? 'fulfilled'
      : placement === 'confirmed' || placement === 'partially_confirmed'
        ? 'open'
        : placement === 'queued_night_mode' || placement === 'outcome_unknown'
          ? 'waiting'
          : 'none';
  return {
    status,
    fulfilled_at: order.fulfilledAt === null ? null : iso(order.fulfilledAt),
    quantity_ordered: sum((item) => item.quantity_ordered),
    quantity_confirmed: sum((item) => item.quantity_confirmed ?? 0),
    quantity_delivered: sum((item) => item.quantity_delivered),
    quantity_short: sum((item) => item.quantity_short),
  };
}
