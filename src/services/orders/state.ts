import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Tenant } from '../../core/caller.js';
import type { Clock } from '../../lib/clock.js';
import { randomToken } from '../../lib/ids.js';
import type { SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import { recordAnsweredLines } from '../../store/order-lines.js';
import { appendOrderHistory } from '../../store/order-listing.js';
import type { OrderState, StoredOrder } from '../../store/orders.js';
import { updateOrder } from '../../store/orders.js';
import type { Tables } from '../../store/schema.js';
import type { EventRecorder } from '../../webhooks/events/record.js';
import type { UpstreamDeps } from '../../wholesalers/call.js';
import type { ContractCache } from './contract-check.js';
import { answeredLineRows } from './lines.js';
import { type StoredOrderRequest, storedRequestOf } from './request.js';
import { orderStatusJson } from './status-view.js';
import { type OrderStatusValue, type PlacementStatus, placementOfAnswer } from './view.js';

/** What the order services need. */
export interface OrderDeps {
  upstream: UpstreamDeps;
  db: Kysely<Tables>;
  clock: Clock;
  /** Writes `order.status_changed` into the outbox, in the transaction of the change it reports. */
  recordEvent: EventRecorder;
  /** For the moments an operator wants to see: lost answers, reconciliations, resends. */
  log: Logger;
  /**
   * Called once an order is placed (answered, or taken in night mode); never fails the order. The
   * sandbox issues an order's delivery notices at once, so their events are recorded now
   * (`noticeSandboxOrderDeliveries`, wired in src/wiring.ts); absent elsewhere.
   */
  afterPlaced?: (tenant: Tenant, orderId: string) => Promise<void>;
  /** Contracts read to check orders (order types, labels, containers), reused for a short while. */
  contracts: ContractCache;
  /** ORDER_MAX_POSITIONS. */
  maxPositions: number;
}

/**
 * The status `GET /v1/orders/{id}/status` would report for a stored state (docs/msv3.md "Order status"): an answer
 * (confirmation or rejection) is `available`; an order taken without an answer yet (night mode) is what
 * MSV3 calls BestellantwortNichtVerfuegbar, `expired`.
 */
export function statusOfState(state: OrderState): OrderStatusValue | null {
  if (state === 'confirmed' || state === 'rejected') return 'available';
  if (state === 'queued_night_mode') return 'expired';
  return null;
}

/** What clients see of a stored order's placement (`placement_status`). */
export function placementStatusOf(
  state: OrderState,
  request: StoredOrderRequest,
  answer: unknown,
): PlacementStatus {
  switch (state) {
    case 'sending':
    case 'unknown':
      return 'outcome_unknown';
    case 'confirmed':
      return placementOfAnswer(request, (answer ?? []) as SubOrderAnswer[]) === 'partially_confirmed'
        ? 'partially_confirmed'
        : 'confirmed';
    default:
      return state;
  }
}

export interface OrderChange {
  state: OrderState;
  /** The sub-orders of the wholesaler's answer, when this change brings one. */
  answer?: SubOrderAnswer[];
  /** The status now known; an `order.status_changed` event is recorded when it differs from the stored one. */
  status: OrderStatusValue | null;
}

/**
 * Writes the change in one transaction with what follows from it: the lines' confirmed quantities when
 * it brings an answer, a history entry when the placement status or the MSV3 status changes, and, when
 * the status changed, its `order.status_changed` event: a webhook never announces a state the database
 * does not hold, and no change goes unannounced.
 */
export async function saveOrderChange(
  deps: Pick<OrderDeps, 'db' | 'clock' | 'recordEvent'>,
  order: StoredOrder,
  change: OrderChange,
): Promise<void> {
  const newStatus = change.status !== order.lastStatus ? change.status : null;
  const request = storedRequestOf(order.request);
  const answer = change.answer ?? order.answer;
  const placement = placementStatusOf(change.state, request, answer);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await updateOrder(trx, deps.clock, order.id, {
      state: change.state,
      ...(change.answer === undefined ? {} : { answer: change.answer }),
      ...(newStatus === null ? {} : { lastStatus: newStatus }),
      placementStatus: placement,
    });
    if (change.answer !== undefined)
      await recordAnsweredLines(trx, order.id, answeredLineRows(order.bestellungId, request, change.answer));
    if (placement !== order.placementStatus || newStatus !== null) {
      await appendOrderHistory(trx, {
        id: randomToken(16),
        order_id: order.id,
        at: now,
        placement_status: placement,
        status: change.status ?? order.lastStatus,
      });
    }
    if (newStatus !== null) {
      await deps.recordEvent(trx, {
        accountId: order.accountId,
        mode: order.mode,
        type: 'order.status_changed',
        wholesaler: order.wholesaler,
        customerId: order.customerId,
        data: {
          ...orderStatusJson({ ...order, ...change, answer, placementStatus: placement }, newStatus),
          previous_status: order.lastStatus,
        },
      });
    }
  });
  order.state = change.state;
  if (change.answer !== undefined) order.answer = change.answer;
  if (newStatus !== null) order.lastStatus = newStatus;
  order.placementStatus = placement;
}
