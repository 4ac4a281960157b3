import type { OrderRequest, OrderResponse, SubOrderAnswer } from '../msv3/operations/bestellen.js';
import type { OrderStatusRequest, OrderStatusResponse } from '../msv3/operations/bestellstatus-abfragen.js';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import { rejectDuplicates, requireUuid } from './business-rules.js';
import type { RequestContext } from './context.js';
import { issueDeliveryNotices } from './deliveries.js';
import { wholesalerOfTenant } from './endpoint-path.js';
import { validationFault } from './faults.js';
import type { MockEnvironment } from './options.js';
import { answerSubOrder } from './order-answers.js';
import { forgetPastRetention } from './retention.js';
import { SCENARIO_PZNS } from './scenarios.js';
import type { CustomerState, StoredOrder, TenantState } from './state.js';
import { supplyTermsAt } from './supply.js';

/**
 * bestellen and bestellstatusAbfragen. Orders are kept per customer by `Bestellung/@Id`:
 * - a repeated `bestellen` with a known Id returns the first answer and places nothing (crash-safe retries);
 * - in night mode (configured hours, or the NIGHT_MODE scenario PZN) the answer is `NachtBetrieb=true`
 *   without sub-orders; the order is processed when the night ends (or `nightOrderDelayMs` later) and
 *   its result is then available through `bestellstatusAbfragen`. No timers: due orders are processed
 *   (as of their due time) when the customer's next request arrives, so a manual clock drives it all;
 * - status: `BestellantwortVerfuegbar` for 7 days after placement, then `BestellantwortNichtVerfuegbar`;
 *   the id is forgotten after 30 days (`KennungUnbekannt`, as for ids never seen).
 */

export const ANSWER_AVAILABLE_MS = 7 * 86_400_000;
export const ORDER_ID_RETENTION_MS = 30 * 86_400_000;

function checkBusinessRules(request: OrderRequest): void {
  rejectDuplicates(
    request.subOrders.map((s) => s.id),
    'Auftrag Id',
  );
  for (const sub of request.subOrders) {
    rejectDuplicates(
      sub.positions.map((p) => p.pzn),
      `PZN in Auftrag ${sub.id}:`,
    );
    const versand = sub.orderType === 'VERSAND';
    if (versand && sub.containerId === undefined) {
      throw validationFault(
        `Auftrag ${sub.id}: GebindeId is mandatory for VERSAND`,
        'Für VERSAND-Aufträge fehlt die GebindeId.',
      );
    }
    if (!versand && sub.containerId !== undefined) {
      throw validationFault(
        `Auftrag ${sub.id}: GebindeId is only allowed for VERSAND`,
        'Eine GebindeId ist nur bei VERSAND-Aufträgen erlaubt.',
      );
    }
  }
}

function isNightHour(env: MockEnvironment, now: number): boolean {
  const night = env.nightHours;
  if (night === undefined) return false;
  const hour = env.calendar.at(now).hour;
  return night.from < night.to
    ? hour >= night.from && hour < night.to
    : hour >= night.from || hour < night.to;
}

/** The first instant after `now` at which the night window ends. */
function endOfNight(env: MockEnvironment, now: number): number {
  const { calendar } = env;
  const to = `${String(env.nightHours?.to ?? 6).padStart(2, '0')}:00`;
  const today = calendar.at(now).date;
  const candidate = calendar.epochOf(today, to);
  return candidate > now ? candidate : calendar.epochOf(calendar.addDays(today, 1), to);
}

/** Processes an order as of `at`: its answer, and its delivery notices (returned). */
export function processOrder(
  env: MockEnvironment,
  tenant: TenantState,
  customer: CustomerState,
  order: StoredOrder,
  at: number,
): { answers: SubOrderAnswer[]; notices: DeliveryNotice[] } {
  const terms = supplyTermsAt(
    order.version,
    customer.contract,
    at,
    env.calendar,
    wholesalerOfTenant(tenant.name),
  );
  const answers = order.request.subOrders.map((sub) => answerSubOrder(sub, terms));
  const notices = issueDeliveryNotices(env, tenant, customer, order.request, answers, at);
  order.processed = answers;
  order.noticeNumbers = notices.map((n) => n.deliveryNoteNumber);
  customer.orders.set(order.id, order); // changed in place: set again to be saved (record-map.ts)
  customer.pendingOrders.delete(order.id);
  return { answers, notices };
}

/**
 * Processes night orders whose time has come and forgets orders, notices, returns and take-back offers
 * past retention; run before each request that uses the customer's state. True if anything changed.
 */
export function settleOrders(
  env: MockEnvironment,
  tenant: TenantState,
  customer: CustomerState,
  now: number,
): boolean {
  let changed = false;
  for (const id of customer.pendingOrders) {
    const order = customer.orders.get(id);
    if (order !== undefined && order.readyAt <= now) {
      processOrder(env, tenant, customer, order, order.readyAt);
      changed = true;
    }
  }
  for (const [id, order] of customer.orders) {
    if (now - order.placedAt > ORDER_ID_RETENTION_MS) {
      customer.orders.delete(id);
      customer.pendingOrders.delete(id);
      changed = true;
    } else break; // insertion order = placement order
  }
  return forgetPastRetention(customer, now) || changed;
}

export function placeOrder(ctx: RequestContext, request: OrderRequest): OrderResponse {
  const { env, now, customer, tenant } = ctx;
  const known = customer.orders.get(request.id);
  if (known !== undefined) return known.firstAnswer;
  checkBusinessRules(request);

  const nightScenario = request.subOrders.some((s) =>
    s.positions.some((p) => p.pzn === SCENARIO_PZNS.NIGHT_MODE.pzn),
  );
  const nightHour = isNightHour(env, now);
  const order: StoredOrder = {
    id: request.id,
    supportId: request.supportId,
    version: ctx.version,
    placedAt: now,
    request,
    firstAnswer: { id: request.id, supportId: request.supportId, nightMode: true, subOrders: [] },
    readyAt: nightHour ? endOfNight(env, now) : now + env.nightOrderDelayMs,
  };
  customer.orders.set(order.id, order);
  customer.ordersPlaced++;
  if (nightHour || nightScenario) {
    customer.pendingOrders.add(order.id);
    return order.firstAnswer;
  }
  order.readyAt = now;
  const subOrders = processOrder(env, tenant, customer, order, now).answers;
  order.firstAnswer = { id: request.id, supportId: request.supportId, nightMode: false, subOrders };
  return order.firstAnswer;
}

export function orderStatus(ctx: RequestContext, request: OrderStatusRequest): OrderStatusResponse {
  requireUuid(request.orderId, 'bestellId');
  const order = ctx.customer.orders.get(request.orderId);
  if (order === undefined) {
    return { id: request.orderId, status: 'KennungUnbekannt', supportId: null, subOrders: [] };
  }
  if (order.processed === undefined || ctx.now - order.placedAt > ANSWER_AVAILABLE_MS) {
    return {
      id: order.id,
      status: 'BestellantwortNichtVerfuegbar',
      supportId: order.supportId,
      subOrders: [],
    };
  }
  return {
    id: order.id,
    status: 'BestellantwortVerfuegbar',
    supportId: order.supportId,
    subOrders: order.processed,
  };
}
