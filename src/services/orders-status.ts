import { ApiError } from '../http/errors.js';
import type { Credentials } from '../msv3/credentials.js';
import type { SubOrderAnswer } from '../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../msv3/operations/bestellstatus-abfragen.js';
import type { KeyMode } from '../store/api-key-secret.js';
import { findOwnOrder, type OrderState } from '../store/orders.js';
import type { DeliveryPortion, SubstitutionInfo } from './delivery-parts.js';
import {
  ORDER_STATUS,
  type OrderStatusValue,
  orderItems,
  orderLabelOf,
  type Rejection,
  rejectionOf,
} from './orders-json.js';
import type { DeliveryPreference, StoredOrderRequest } from './orders-request.js';
import { type OrderDeps, type PlacementState, placementStateOf, saveOrderChange } from './orders-state.js';
import { callWholesaler } from './wholesaler-call.js';

/**
 * GET /v1/orders/{order_id}/status → `bestellstatusAbfragen` with the order's Bestellung Id (PROTOCOL.md
 * §2.5, §5.6): BestellantwortVerfuegbar → `available`, BestellantwortNichtVerfuegbar → `expired` (the
 * answer is gone, or not there yet: `placement_status` says which), KennungUnbekannt → `unknown`.
 *
 * An order belongs to one pharmacy: it is found only for the account and mode of the API key, the
 * wholesaler it was placed with, and the MSV3 customer id of this request's credentials (another
 * customer's id is 404, as for an id that does not exist), and it is shown only after the wholesaler
 * accepted those credentials in this very call. The answer updates the stored order (a night-mode order
 * becomes confirmed or rejected; an open outcome is settled) and a changed status is announced as
 * `order.status_changed`, in the same transaction.
 */

export interface OrderStatusItem {
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

export async function orderStatus(
  deps: OrderDeps,
  owner: { accountId: string; mode: KeyMode },
  credentials: Credentials,
  input: { orderId: string; wholesaler: string },
): Promise<OrderStatusResult> {
  const wholesaler = await deps.upstream.registry.resolve(owner, input.wholesaler);
  const order = await findOwnOrder(
    deps.db,
    { ...owner, wholesaler: input.wholesaler, customerId: credentials.username },
    input.orderId,
  );
  if (order === undefined) {
    throw new ApiError(
      'order_not_found',
      `No order ${input.orderId} with ${input.wholesaler} for this API key and MSV3 customer.`,
      { wholesaler: input.wholesaler, param: 'order_id' },
    );
  }
  const { value } = await callWholesaler(deps.upstream, wholesaler, bestellstatusAbfragen, credentials, {
    clientSoftwareId: deps.upstream.clientSoftwareId,
    orderId: order.bestellungId,
  });
  const request = order.request as StoredOrderRequest;
  const status = ORDER_STATUS[value.status];
  await saveOrderChange(deps, order, {
    ...stateAfter(order.state, value.status, request, value.subOrders),
    status,
  });

  const answer = answerFor(request, order.answer as SubOrderAnswer[] | null);
  return {
    order_id: order.id,
    status,
    items: statusItems(order.bestellungId, request, answer),
    wholesaler: input.wholesaler,
    request_id: order.bestellungId,
    placement_status: placementStateOf(order.state),
    rejection: answer === null ? null : rejectionOf(request, answer),
    order_label: answer === null ? null : orderLabelOf(request, answer),
  };
}

function stateAfter(
  state: OrderState,
  status: keyof typeof ORDER_STATUS,
  request: StoredOrderRequest,
  subOrders: SubOrderAnswer[],
): { state: OrderState; answer?: SubOrderAnswer[] } {
  if (status === 'BestellantwortVerfuegbar') {
    return { state: rejectionOf(request, subOrders) === null ? 'confirmed' : 'rejected', answer: subOrders };
  }
  // Known without an answer: it was taken. An open outcome is settled; a settled one stays as it was.
  if (
    status === 'BestellantwortNichtVerfuegbar' &&
    (state === 'sending' || state === 'unknown' || state === 'not_placed')
  ) {
    return { state: 'queued_night_mode' };
  }
  // KennungUnbekannt cannot tell "never placed" from "forgotten": nothing to learn.
  return { state };
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
