import type { Tenant } from '../core/caller.js';
import { ApiError } from '../core/errors.js';
import {
  type ControlRequest,
  type ControlResult,
  HELPER_PASSWORD,
  sendControl,
} from '../mock/control-client.js';
import { createCredentials } from '../msv3/credentials.js';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { findOrderById, type StoredOrder } from '../store/orders.js';
import type { ResolvedWholesaler } from '../wholesalers/registry.js';
import type { WholesalerStatusChange } from '../wholesalers/status/feed.js';
import { type DeliveryDeps, rememberNotices } from './deliveries/notices.js';
import { type DeliveryNoticeJson, toDeliveryNoticeJson } from './deliveries/view.js';
import type { OrderDeps } from './orders/state.js';
import { orderStatus } from './orders/status.js';
import type { OrderStatusResult } from './orders/status-view.js';

/**
 * Test helpers (docs/sandbox.md "Test helpers"): make the sandbox do now what otherwise takes a night or
 * never happens, and raise the events a client would otherwise wait for. Test keys only, and only on the
 * caller's own sandbox (its account's tenants; an order of another account is 404). The sandbox is
 * driven through its control surface over HTTP (`mock/control-client.ts`); the events go through the code
 * paths that record them when a client observes the change: the order status read (`orderStatus`), the
 * delivery notices' first sighting (`rememberNotices`, which records each notice once however it is
 * seen), and the one status announcer (`WholesalerStatusFeed.announce`).
 */

export interface SandboxControlDeps {
  orders: OrderDeps;
  deliveries: DeliveryDeps;
  status: { announce(change: WholesalerStatusChange): void };
}

/** The customer id sent with a control request that concerns no customer (taking a tenant down). */
const NO_CUSTOMER = 'testhelper';

function requireTestMode(tenant: Tenant): void {
  if (tenant.mode !== 'test') {
    throw new ApiError(
      'test_mode_required',
      'Test helpers drive the sandbox and need a pk_test_ key; live wholesalers cannot be told what to do.',
    );
  }
}

function sandboxOnly(wholesaler: ResolvedWholesaler): void {
  if (wholesaler.route !== 'sandbox') {
    throw new ApiError(
      'operation_not_supported',
      `${wholesaler.id} is a wholesaler's own test server, not the gateway's sandbox: test helpers drive the sandbox only (use ${wholesaler.id.replace(/_test$/, '')}).`,
      { wholesaler: wholesaler.id },
    );
  }
}

/** The caller's own order, with the sandbox wholesaler it was placed with. */
async function ownSandboxOrder(
  deps: SandboxControlDeps,
  tenant: Tenant,
  orderId: string,
): Promise<{ order: StoredOrder; wholesaler: ResolvedWholesaler }> {
  requireTestMode(tenant);
  const order = await findOrderById(deps.orders.db, orderId);
  if (order === undefined || order.accountId !== tenant.accountId || order.mode !== tenant.mode) {
    throw new ApiError('order_not_found', `No order ${orderId} for this API key.`, { param: 'order_id' });
  }
  const wholesaler = await deps.orders.upstream.registry.resolve(tenant, order.wholesaler);
  sandboxOnly(wholesaler);
  return { order, wholesaler };
}

async function control(
  wholesaler: ResolvedWholesaler,
  customerId: string,
  input: ControlRequest,
): Promise<ControlResult> {
  try {
    return await sendControl(wholesaler.endpoint.baseUrl, customerId, input);
  } catch (error) {
    throw new ApiError('wholesaler_unreachable', `The sandbox for ${wholesaler.id} could not be reached.`, {
      wholesaler: wholesaler.id,
      cause: error,
    });
  }
}

/** The sandbox's refusals as API errors; `conflicts` words its 409s for this helper. */
function refusal(
  result: Extract<ControlResult, { ok: false }>,
  wholesaler: string,
  orderId: string,
  conflicts: Record<string, string>,
): ApiError {
  if (result.status === 404) {
    return new ApiError(
      'order_not_found',
      `The sandbox no longer knows order ${orderId} (it forgets orders 30 days after placement).`,
      { wholesaler, param: 'order_id' },
    );
  }
  const conflict = conflicts[result.error];
  if (result.status === 409 && conflict !== undefined)
    return new ApiError('conflict', conflict, { wholesaler });
  return new ApiError(
    'wholesaler_http_error',
    `The sandbox refused the test helper (HTTP ${result.status}): ${result.message}`,
    { wholesaler, upstream: { http_status: result.status } },
  );
}

/** Records the notices' events (first sighting only) where the wholesaler has delivery notices at all. */
async function noticeAppeared(
  deps: SandboxControlDeps,
  tenant: Tenant,
  order: StoredOrder,
  wholesaler: ResolvedWholesaler,
  notices: readonly DeliveryNotice[],
): Promise<DeliveryNoticeJson[]> {
  if (!lieferavisAbfrageNeu.versions.includes(wholesaler.version) || notices.length === 0) return [];
  await rememberNotices(
    deps.deliveries,
    {
      tenant,
      wholesaler: order.wholesaler,
      credentials: createCredentials(order.customerId, HELPER_PASSWORD),
    },
    notices,
  );
  return notices.map(toDeliveryNoticeJson);
}

export interface ProcessedOrderJson {
  order: OrderStatusResult;
  deliveries: DeliveryNoticeJson[];
}

/**
 * `POST /v1/test_helpers/orders/{order_id}/process`: a night-mode order is processed now, as when the
 * night ends. Raises `order.status_changed` (through the status read) and, for its delivery notices,
 * `delivery.received` and `delivery.shortage`.
 */
export async function processSandboxOrder(
  deps: SandboxControlDeps,
  tenant: Tenant,
  orderId: string,
): Promise<ProcessedOrderJson> {
  const { order, wholesaler } = await ownSandboxOrder(deps, tenant, orderId);
  const result = await control(wholesaler, order.customerId, {
    action: 'process-order',
    orderId: order.bestellungId,
  });
  if (!result.ok) {
    throw refusal(result, order.wholesaler, orderId, {
      order_processed: `Order ${orderId} is no night-mode order waiting to be processed: the sandbox has processed it already.`,
    });
  }
  const deliveries = await noticeAppeared(deps, tenant, order, wholesaler, result.notices);
  const status = await orderStatus(
    deps.orders,
    tenant,
    createCredentials(order.customerId, HELPER_PASSWORD),
    {
      orderId,
      wholesaler: order.wholesaler,
    },
  );
  return { order: status, deliveries };
}

export interface DeliveredOrderJson {
  order_id: string;
  wholesaler: string;
  deliveries: DeliveryNoticeJson[];
}

/**
 * `POST /v1/test_helpers/orders/{order_id}/deliver`: one more delivery notice for the order's lines
 * (with `shortages`, half of every line is missing). Raises `delivery.received` and, with shortages,
 * `delivery.shortage`, without waiting for `GET /v1/deliveries`.
 */
export async function deliverSandboxOrder(
  deps: SandboxControlDeps,
  tenant: Tenant,
  orderId: string,
  shortages: boolean,
): Promise<DeliveredOrderJson> {
  const { order, wholesaler } = await ownSandboxOrder(deps, tenant, orderId);
  if (!lieferavisAbfrageNeu.versions.includes(wholesaler.version)) {
    throw new ApiError(
      'operation_not_supported',
      `${order.wholesaler} speaks MSV3 version 1, which has no delivery notices.`,
      { wholesaler: order.wholesaler },
    );
  }
  const result = await control(wholesaler, order.customerId, {
    action: 'deliver-order',
    orderId: order.bestellungId,
    shortages,
  });
  if (!result.ok) {
    throw refusal(result, order.wholesaler, orderId, {
      order_not_processed: `Order ${orderId} was taken in night mode and has not been processed yet: process it first (POST /v1/test_helpers/orders/${orderId}/process).`,
      nothing_to_deliver: `Order ${orderId} has no line the wholesaler delivers (rejected, back-ordered or procured specially).`,
    });
  }
  const deliveries = await noticeAppeared(deps, tenant, order, wholesaler, result.notices);
  return { order_id: orderId, wholesaler: order.wholesaler, deliveries };
}

export interface SandboxStatusJson {
  wholesaler: string;
  status: 'up' | 'down';
  /** False when it was in that state already (no event then). */
  changed: boolean;
}

/**
 * `POST /v1/test_helpers/wholesalers/{id}/down` and `/up`: the caller's sandbox wholesaler answers every
 * MSV3 request with HTTP 503 (as in maintenance) or answers again. A real change is announced as
 * `wholesaler.status_changed` through the announcer that also hears the circuit breakers and probes.
 */
export async function setSandboxStatus(
  deps: SandboxControlDeps,
  tenant: Tenant,
  wholesalerId: string,
  up: boolean,
): Promise<SandboxStatusJson> {
  requireTestMode(tenant);
  const wholesaler = await deps.orders.upstream.registry.resolve(tenant, wholesalerId);
  sandboxOnly(wholesaler);
  const result = await control(wholesaler, NO_CUSTOMER, { action: 'status', up });
  if (!result.ok) {
    throw new ApiError(
      'wholesaler_http_error',
      `The sandbox refused the test helper (HTTP ${result.status}): ${result.message}`,
      { wholesaler: wholesalerId, upstream: { http_status: result.status } },
    );
  }
  if (result.changed) {
    const status = up ? 'up' : 'down';
    deps.status.announce({
      wholesaler: wholesalerId,
      route: 'sandbox',
      mode: tenant.mode,
      accountId: tenant.accountId,
      status,
      previousStatus: up ? 'down' : 'up',
      at: deps.orders.clock.now(),
      ...(up ? {} : { cause: { reason: 'maintenance', detail: 'taken down by a test helper' } }),
    });
  }
  return { wholesaler: wholesalerId, status: up ? 'up' : 'down', changed: result.changed };
}

/**
 * After a sandbox order was placed: its delivery notices exist at once, so their events are recorded
 * now rather than at the next `GET /v1/deliveries`. Never fails the order (the caller logs a failure).
 */
export async function noticeSandboxOrderDeliveries(
  deps: SandboxControlDeps,
  tenant: Tenant,
  orderId: string,
): Promise<void> {
  if (tenant.mode !== 'test') return;
  const order = await findOrderById(deps.orders.db, orderId);
  if (order === undefined || order.accountId !== tenant.accountId) return;
  const wholesaler = await deps.orders.upstream.registry.resolve(tenant, order.wholesaler);
  if (wholesaler.route !== 'sandbox' || !lieferavisAbfrageNeu.versions.includes(wholesaler.version)) return;
  const result = await control(wholesaler, order.customerId, {
    action: 'order-notices',
    orderId: order.bestellungId,
  });
  if (result.ok) await noticeAppeared(deps, tenant, order, wholesaler, result.notices);
}
