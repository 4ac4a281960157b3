import type { SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import type { OrderState, StoredOrder } from '../../store/orders.js';
import type { DeliveryPortion, SubstitutionInfo } from '../delivery-parts.js';
import { type DeliveryPreference, type StoredOrderRequest, storedRequestOf } from './request.js';
import {
  type OrderStatusValue,
  type PlacementStatus,
  type Rejection,
  rejectionsOf,
  type SubOrderResult,
  subOrderResults,
} from './view.js';

/**
 * A stored order as `GET /v1/orders/{order_id}/status` shows it (docs/orders.md, docs/msv3.md "Order
 * status", plus additive fields); also the `data` of `order.status_changed` (with `previous_status`).
 */

/**
 * Where the wholesaler's answer stands, in words the spec's `status` cannot say: `pending` is a
 * night-mode order the wholesaler has taken but not processed yet (MSV3 BestellantwortNichtVerfuegbar,
 * status `expired`): waiting, not lost. `expired` is an answer that is gone (too old).
 */
export type AnswerStatus = 'available' | 'pending' | 'expired' | 'unknown';

export function answerStatusOf(state: OrderState, status: OrderStatusValue | null): AnswerStatus | null {
  if (state === 'queued_night_mode') return status === 'unknown' ? 'unknown' : 'pending';
  if (status === null) return state === 'confirmed' || state === 'rejected' ? 'available' : null;
  return status;
}

interface OrderStatusItem {
  pzn: string;
  quantity_ordered: number;
  delivery_preference: DeliveryPreference;
  /** Additive, when the wholesaler's answer is known: */
  quantity_confirmed?: number;
  deliveries?: DeliveryPortion[];
  substitution?: SubstitutionInfo | null;
  merged_from?: number[];
}

export interface OrderStatusResult {
  order_id: string;
  status: OrderStatusValue;
  items: OrderStatusItem[];
  /** Additive: */
  wholesaler: string;
  /** The Bestellung Id (the order result's `request_id`). */
  request_id: string;
  placement_status: PlacementStatus;
  answer_status: AnswerStatus | null;
  /** The first refused sub-order's texts (Auftragsfehler), else null; every sub-order's in `sub_orders`. */
  rejection: Rejection | null;
  order_label: string | null;
  sub_orders: SubOrderResult[];
}

export function orderStatusJson(
  order: Pick<StoredOrder, 'id' | 'wholesaler' | 'bestellungId' | 'state' | 'request' | 'answer'> & {
    placementStatus: string | null;
  },
  status: OrderStatusValue,
): OrderStatusResult {
  const request = storedRequestOf(order.request);
  const answer = answerFor(request, order.answer as SubOrderAnswer[] | null);
  const subOrders = subOrderResults(order.bestellungId, request, answer);
  const unanswered = answer === null;
  return {
    order_id: order.id,
    status,
    items: subOrders.flatMap((sub) =>
      sub.items.map(({ answered: _answered, ...item }) =>
        unanswered
          ? {
              pzn: item.pzn,
              quantity_ordered: item.quantity_ordered,
              delivery_preference: item.delivery_preference,
              ...(item.merged_from === undefined ? {} : { merged_from: item.merged_from }),
            }
          : item,
      ),
    ),
    wholesaler: order.wholesaler,
    request_id: order.bestellungId,
    placement_status: (order.placementStatus ?? 'outcome_unknown') as PlacementStatus,
    answer_status: answerStatusOf(order.state, status),
    rejection: answer === null ? null : (rejectionsOf(request, answer)[0]?.rejection ?? null),
    order_label: subOrders[0]?.order_label ?? null,
    sub_orders: subOrders,
  };
}

/** The stored answer, if it holds our sub-orders (an order taken in night mode has none until processed). */
function answerFor(request: StoredOrderRequest, answer: SubOrderAnswer[] | null): SubOrderAnswer[] | null {
  return answer?.some((sub) => request.subOrders.some((ours) => ours.id === sub.id)) ? answer : null;
}
