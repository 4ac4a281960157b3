import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import { issueDeliveryNotices } from './deliveries.js';
import type { MockEnvironment } from './options.js';
import { processOrder, settleOrders } from './orders.js';
import { type CustomerState, customerOf, type StoredOrder, type TenantState } from './state.js';

/**
 * The control surface (docs/sandbox.md "Test helpers"): what a tester can make the sandbox do on demand,
 * beyond what a wholesaler's clients can ask of it. `POST /<tenant>/control/<action>` with a JSON body
 * and the same Basic auth as SOAP requests (the user name is the customer), run on the tenant's state
 * through the same load and save as a SOAP request (`world-store.ts`):
 *
 * - `process-order` `{order_id}`: a night-mode order is processed now, as when the night ends;
 * - `deliver-order` `{order_id, shortages?}`: one more delivery notice per sub-order and tour of a
 *   processed order (with `shortages`, half of every line, rounded up, is missing);
 * - `order-notices` `{order_id}`: the delivery notices of an order (nothing changes);
 * - `status` `{up}`: takes the tenant down (every SOAP request answers HTTP 503) or up again.
 *
 * `order_id` is the MSV3 `Bestellung/@Id`. Answers are JSON: 200 with what happened, or 400/404/409
 * with `{error, message}`.
 */

export interface ControlAnswer {
  status: 200 | 400 | 404 | 409;
  body: object;
  /** Whether the tenant's state changed (and must be saved). */
  changed: boolean;
}

const CONTROL_ACTIONS = ['process-order', 'deliver-order', 'order-notices', 'status'] as const;
type ControlAction = (typeof CONTROL_ACTIONS)[number];

export function isControlAction(action: string): action is ControlAction {
  return (CONTROL_ACTIONS as readonly string[]).includes(action);
}

function refused(status: 400 | 404 | 409, error: string, message: string, changed = false): ControlAnswer {
  return { status, body: { error, message }, changed };
}

function field<T>(input: unknown, name: string, type: 'string' | 'boolean'): T | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const value = (input as Record<string, unknown>)[name];
  return typeof value === type ? (value as T) : undefined;
}

/** The order's notices still kept (each is forgotten 30 days after it was made), in creation order. */
function noticesOf(customer: CustomerState, order: StoredOrder): DeliveryNotice[] {
  if (order.noticeNumbers !== undefined) {
    return order.noticeNumbers.flatMap((number) => customer.notices.get(number)?.notice ?? []);
  }
  // An order stored before it kept its notices' numbers: the notices whose lines name its sub-orders.
  const subOrders = new Set(order.request.subOrders.map((s) => s.id));
  return [...customer.notices.values()]
    .map((stored) => stored.notice)
    .filter((notice) =>
      notice.lines.some((line) =>
        [...line.delivered, ...line.shortages].some((part) => subOrders.has(part.orderId ?? '')),
      ),
    );
}

/** Runs one action on the tenant's state (changed in place). */
export function runControl(
  action: ControlAction,
  input: unknown,
  tenant: TenantState,
  customerId: string,
  env: MockEnvironment,
): ControlAnswer {
  const now = env.clock.now();
  if (action === 'status') {
    const up = field<boolean>(input, 'up', 'boolean');
    if (up === undefined) return refused(400, 'invalid_request', 'The body must be {"up": true|false}.');
    const changed = tenant.down === up;
    tenant.down = !up;
    return { status: 200, body: { up, changed }, changed };
  }
  const orderId = field<string>(input, 'order_id', 'string');
  if (orderId === undefined) {
    return refused(400, 'invalid_request', 'The body must name the order: {"order_id": "<Bestellung Id>"}.');
  }
  const customer = customerOf(tenant, customerId);
  // Due night orders are processed first, as before any SOAP request of this customer.
  const settled = settleOrders(env, tenant, customer, now);
  const order = customer.orders.get(orderId);
  if (order === undefined) {
    return refused(404, 'order_not_found', `No order ${orderId} of customer ${customerId}.`, settled);
  }
  switch (action) {
    case 'order-notices':
      return {
        status: 200,
        body: { order_id: orderId, notices: noticesOf(customer, order) },
        changed: settled,
      };
    case 'process-order': {
      if (order.processed !== undefined) {
        return refused(409, 'order_processed', `Order ${orderId} has been processed already.`, settled);
      }
      order.readyAt = now;
      const { notices } = processOrder(env, tenant, customer, order, now);
      return { status: 200, body: { order_id: orderId, notices }, changed: true };
    }
    case 'deliver-order': {
      if (order.processed === undefined) {
        return refused(
          409,
          'order_not_processed',
          `Order ${orderId} has not been processed yet (night mode): process it first.`,
          settled,
        );
      }
      const shortages = field<boolean>(input, 'shortages', 'boolean') ?? false;
      const notices = issueDeliveryNotices(
        env,
        tenant,
        customer,
        order.request,
        order.processed,
        now,
        shortages ? 'half' : 'none',
      );
      if (notices.length === 0) {
        return refused(409, 'nothing_to_deliver', `Order ${orderId} has no line to deliver.`, settled);
      }
      if (order.noticeNumbers !== undefined) {
        const issued = notices.map((n) => n.deliveryNoteNumber);
        customer.orders.set(order.id, { ...order, noticeNumbers: [...order.noticeNumbers, ...issued] });
      }
      return { status: 200, body: { order_id: orderId, notices }, changed: true };
    }
  }
}
