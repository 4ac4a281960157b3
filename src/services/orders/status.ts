import type { Tenant } from '../../core/caller.js';
import { ApiError } from '../../core/errors.js';
import type { Credentials } from '../../msv3/credentials.js';
import type { SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../../msv3/operations/bestellstatus-abfragen.js';
import { findOwnOrder, type OrderState } from '../../store/orders.js';
import { callWholesaler } from '../../wholesalers/call.js';
import { type StoredOrderRequest, storedRequestOf } from './request.js';
import { type OrderDeps, saveOrderChange } from './state.js';
import { type OrderStatusResult, orderStatusJson } from './status-view.js';
import { ORDER_STATUS, placementOfAnswer } from './view.js';

/**
 * GET /v1/orders/{order_id}/status → `bestellstatusAbfragen` with the order's Bestellung Id (docs/msv3.md
 * "Order status"): BestellantwortVerfuegbar → `available`, BestellantwortNichtVerfuegbar → `expired` (the
 * answer is gone, or not there yet: `placement_status` says which), KennungUnbekannt → `unknown`.
 *
 * An order belongs to one pharmacy: it is found only for the account and mode of the API key, the
 * wholesaler it was placed with, and the MSV3 customer id of this request's credentials (another
 * customer's id is 404, as for an id that does not exist), and it is shown only after the wholesaler
 * accepted those credentials in this very call. The answer updates the stored order (a night-mode order
 * becomes confirmed or rejected; an open outcome is settled) and a changed status is announced as
 * `order.status_changed`, in the same transaction.
 */

export async function orderStatus(
  deps: OrderDeps,
  tenant: Tenant,
  credentials: Credentials,
  input: { orderId: string; wholesaler: string },
): Promise<OrderStatusResult> {
  const customer = { ...tenant, wholesaler: input.wholesaler, customerId: credentials.username };
  const wholesaler = await deps.upstream.registry.resolve(tenant, input.wholesaler).catch(async (error) => {
    throw (await goneWholesalerError(deps, customer, input.orderId, error)) ?? error;
  });
  const order = await findOwnOrder(deps.db, customer, input.orderId);
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
  const status = ORDER_STATUS[value.status];
  await saveOrderChange(deps, order, {
    ...stateAfter(order.state, value.status, storedRequestOf(order.request), value.subOrders),
    status,
  });
  return orderStatusJson(order, status);
}

/**
 * An order placed with a custom wholesaler that has been deleted since: its data are kept, but nobody
 * can be asked for its status. Says so instead of the plain "unknown wholesaler" (still 404
 * `wholesaler_not_found`: registering the same endpoint again brings the id, and the status, back).
 */
async function goneWholesalerError(
  deps: OrderDeps,
  customer: Parameters<typeof findOwnOrder>[1],
  orderId: string,
  error: unknown,
): Promise<ApiError | undefined> {
  if (!(error instanceof ApiError) || error.kind !== 'wholesaler_not_found') return undefined;
  if (!customer.wholesaler.startsWith('custom-')) return undefined;
  if ((await findOwnOrder(deps.db, customer, orderId)) === undefined) return undefined;
  return new ApiError(
    'wholesaler_not_found',
    `Order ${orderId} was placed with ${customer.wholesaler}, which is no longer registered (a deleted custom wholesaler): the order's stored data are kept, but its status cannot be asked. Registering the same endpoint again brings ${customer.wholesaler} back.`,
    { wholesaler: customer.wholesaler, param: 'wholesaler' },
  );
}

function stateAfter(
  state: OrderState,
  status: keyof typeof ORDER_STATUS,
  request: StoredOrderRequest,
  subOrders: SubOrderAnswer[],
): { state: OrderState; answer?: SubOrderAnswer[] } {
  if (status === 'BestellantwortVerfuegbar') {
    return {
      state: placementOfAnswer(request, subOrders) === 'rejected' ? 'rejected' : 'confirmed',
      answer: subOrders,
    };
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
