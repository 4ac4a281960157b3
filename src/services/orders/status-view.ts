import type { SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import type { OrderState, StoredOrder } from '../../store/orders.js';
import type { DeliveryPortion, SubstitutionInfo } from '../delivery-parts.js';
import type { DeliveryPreference, StoredOrderRequest } from './request.js';
import { type OrderStatusValue, orderItems, orderLabelOf, type Rejection, rejectionOf } from './view.js';

/**
 * A stored order as `GET /v1/orders/{order_id}/status` shows it (docs/msv3.md "Order status", plus additive
 * fields); also the `data` of `order.status_changed` (with `previous_status`).
 */

/** The stored state as clients see it (additive `placement_status`): `sending` is an open outcome too. */
type PlacementState = 'confirmed' | 'queued_night_mode' | 'rejected' | 'outcome_unknown' | 'not_placed';

function placementStateOf(state: OrderState): PlacementState {
  return state === 'sending' || state === 'unknown' ? 'outcome_unknown' : state;
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
  placement_status: PlacementState;
  /** The wholesaler's texts when it rejected the order (Auftragsfehler), else null. */
  rejection: Rejection | null;
  order_label: string | null;
}

export function orderStatusJson(
  order: Pick<StoredOrder, 'id' | 'wholesaler' | 'bestellungId' | 'state' | 'request' | 'answer'>,
  status: OrderStatusValue,
): OrderStatusResult {
  const request = order.request as StoredOrderRequest;
  const answer = answerFor(request, order.answer as SubOrderAnswer[] | null);
  return {
    order_id: order.id,
    status,
    items: statusItems(order.bestellungId, request, answer),
    wholesaler: order.wholesaler,
    request_id: order.bestellungId,
    placement_status: placementStateOf(order.state),
    rejection: answer === null ? null : rejectionOf(request, answer),
    order_label: answer === null ? null : orderLabelOf(request, answer),
  };
}

function statusItems(
  bestellungId: string,
  request: StoredOrderRequest,
  answer: SubOrderAnswer[] | null,
): OrderStatusItem[] {
  if (answer === null) {
    return request.lines.map((line) => ({
      pzn: line.pzn,
      quantity_ordered: line.quantity,
      delivery_preference: line.preference,
      ...(line.from.length > 1 ? { merged_from: [...line.from] } : {}),
    }));
  }
  return orderItems(bestellungId, request, answer).map(({ answered: _answered, ...item }) => item);
}

/** The stored answer, if it holds our sub-order (an order taken in night mode has none until processed). */
function answerFor(request: StoredOrderRequest, answer: SubOrderAnswer[] | null): SubOrderAnswer[] | null {
  return answer?.some((sub) => sub.id === request.subOrder.id) ? answer : null;
}
