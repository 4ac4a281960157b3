import type { Logger } from 'pino';
import type { Caller } from '../../core/caller.js';
import { ApiError, type IdempotencyOutcome, isApiError, unexpectedError } from '../../core/errors.js';
import { defaultOutcome } from '../../core/idempotency-outcome.js';
import { sanitizeUntrustedText } from '../../lib/untrusted-text.js';
import type { Credentials } from '../../msv3/credentials.js';
import { bestellen, type SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../../msv3/operations/bestellstatus-abfragen.js';
import type { UpstreamError } from '../../msv3/upstream-error.js';
import { databaseErrorToApiError } from '../../store/database-unavailable.js';
import { ensureOrderLines } from '../../store/order-lines.js';
import {
  deleteUnsentOrder,
  findOrderById,
  insertOrderIfAbsent,
  type StoredOrder,
} from '../../store/orders.js';
import { assertSupports, callWholesalerRaw } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { apiErrorFromUpstream } from '../../wholesalers/upstream-errors.js';
import { checkAgainstContract, needsContract } from './contract-check.js';
import { bestellungIdFor, gatewayOrderId } from './ids.js';
import { orderLineRows } from './lines.js';
import {
  type OrderInput,
  plannedSubOrders,
  type StoredOrderRequest,
  storedOrderRequest,
  storedRequestOf,
  toMsv3OrderRequest,
} from './request.js';
import { type OrderDeps, placementStatusOf, saveOrderChange, statusOfState } from './state.js';
import { type OrderResult, placementOfAnswer, rejectionsOf, subOrderResults } from './view.js';

/**
 * POST /v1/orders → `bestellen`, placed at most once per request (docs/msv3.md "Orders", "Order answers",
 * "Order status").
 *
 * 1. The Bestellung Id is derived from the Idempotency-Key (see `orders/ids.ts`), else random.
 * 2. The order (gateway id, Bestellung Id, account, mode, wholesaler, customer, the exact request) is
 *    stored in state `sending` before anything is sent.
 * 3. `bestellen` goes out. Its answer settles the order: `confirmed`, `queued_night_mode` (NachtBetrieb), or
 *    `rejected` (Auftragsfehler → 422 with the wholesaler's texts; one sub-order per order, so rejection
 *    is all or nothing). A failure before the wholesaler could act (`maybeDelivered: false`) leaves it
 *    `not_placed` and returns the mapped error.
 * 4. A failure after sending (timeout, dropped connection, server fault) leaves the outcome open: the
 *    gateway asks `bestellstatusAbfragen` with the same Id before answering. An available answer settles
 *    the order; "answer not available" means it was taken (answered as `queued_night_mode`); an unknown Id
 *    means it was not placed, so `bestellen` is sent once more with the same Id; anything else is 504
 *    `order_outcome_unknown`, and the same Idempotency-Key reconciles later. When the gateway's shutdown
 *    stopped the call after sending, there is no time to ask: 504 `order_outcome_unknown` at once.
 * 5. A retry that finds the order stored answers from it without a SOAP call when it is settled, and
 *    reconciles first when its outcome is open (the previous attempt crashed or timed out).
 * 6. Once `bestellen` may have reached the wholesaler (in this attempt or an earlier one), any other
 *    failure (the database failing while the answer is stored, a bug) is 504 `order_outcome_unknown`
 *    naming the order, never a generic 5xx that invites a second order; the row stays open and the next
 *    status query or retry with the key reconciles it (docs/resilience.md).
 * 7. What a failure leaves behind (the error, what becomes of the Idempotency-Key, an unsent row) is
 *    decided in one place, `failedPlacement`.
 * A second `bestellen` with a new Id for the same request is impossible: the Id is fixed before step 2.
 */

export interface PlaceOrderInput extends OrderInput {
  wholesaler: string;
  /** From `request.idempotency`; without it every request is a new order. */
  idempotency?: { key: string; firstUsedAt: number } | null;
  /** Fixed by the caller before anything is sent (a split order's stored plan); else derived from the key. */
  bestellungId?: string;
  /** The request's logger, whose lines carry the request id; default `OrderDeps.log`. */
  log?: Logger;
}

interface Placement {
  deps: OrderDeps;
  log: Logger;
  wholesaler: ResolvedWholesaler;
  credentials: Credentials;
  order: StoredOrder;
  request: StoredOrderRequest;
  /** The client's wholesaler id, as given. */
  wholesalerId: string;
  withKey: boolean;
  /** Set once `bestellen` may have reached the wholesaler: from then on every failure is an open outcome. */
  maybeSent: boolean;
}

/** How far a placement got; what a failure leaves behind depends on it (`failedPlacement`). */
interface Progress {
  orderId?: string;
  /** From the insert on: even a failed insert may have committed before its answer was lost. */
  mayBeStored: boolean;
  placement?: Placement;
}

export async function placeOrder(
  deps: OrderDeps,
  caller: Caller,
  credentials: Credentials,
  input: PlaceOrderInput,
): Promise<OrderResult> {
  const progress: Progress = { mayBeStored: false };
  try {
    const placed = await place(deps, caller, credentials, input, progress);
    await deps
      .afterPlaced?.(caller, placed.order_id!)
      .catch((err: unknown) =>
        (input.log ?? deps.log).warn({ err, order_id: placed.order_id }, 'after-placement step failed'),
      );
    return placed;
  } catch (error) {
    throw await failedPlacement(deps, input, progress, error);
  }
}

async function place(
  deps: OrderDeps,
  caller: Caller,
  credentials: Credentials,
  input: PlaceOrderInput,
  progress: Progress,
): Promise<OrderResult> {
  const wholesaler = await deps.upstream.registry.resolve(caller, input.wholesaler);
  assertSupports(wholesaler, bestellen);
  const planned = plannedSubOrders(input, wholesaler, deps.maxPositions);
  const key = input.idempotency ?? undefined;
  const bestellungId =
    input.bestellungId ??
    bestellungIdFor(
      key === undefined ? undefined : { ...caller, idempotencyKey: key.key, firstUsedAt: key.firstUsedAt },
    );
  const id = gatewayOrderId(bestellungId);
  const request = storedOrderRequest(bestellungId, planned);
  // Before anything is stored or sent; a retry of an order stored already was checked when it was new.
  if (needsContract(planned) && (await findOrderById(deps.db, id)) === undefined) {
    const contract = await deps.contracts.contractFor(deps.upstream, wholesaler, credentials);
    checkAgainstContract(contract, planned, input.wholesaler);
  }
  progress.orderId = id;
  progress.mayBeStored = true;
  const { order, created } = await insertOrderIfAbsent(deps.db, deps.clock, {
    id,
    accountId: caller.accountId,
    mode: caller.mode,
    wholesaler: input.wholesaler,
    customerId: credentials.username,
    bestellungId,
    request,
  });
  // The stored request, not a rebuilt one: a resend must carry exactly what may have reached the wholesaler.
  const stored = storedRequestOf(order.request);
  if (!created) checkSameOrder(order, stored, caller, credentials, input.wholesaler, request);
  const placement: Placement = {
    deps,
    log: input.log ?? deps.log,
    wholesaler,
    credentials,
    order,
    request: stored,
    wholesalerId: input.wholesaler,
    withKey: key !== undefined,
    // An open row found by a retry may have been sent by an earlier attempt.
    maybeSent: !created && (order.state === 'sending' || order.state === 'unknown'),
  };
  progress.placement = placement;
  return created ? send(placement, 2) : resume(placement);
}

/**
 * What a failed placement leaves behind, decided here and nowhere else (docs/idempotency.md, "Orders"):
 * - the answer: once `bestellen` may have reached the wholesaler, every failure that is not a decided
 *   answer (the wholesaler's rejection or error, an open outcome) is 504 `order_outcome_unknown` naming
 *   the order, never a 5xx that invites a second order;
 * - the Idempotency-Key (`idempotencyKey` of the error, applied by the HTTP layer): the wholesaler's
 *   rejection is stored for replay; an open outcome, or any 5xx once the order may be stored, reopens the
 *   key, so the retry with it resumes the stored order and its Bestellung Id instead of placing a new one;
 *   anything else follows the rule by kind (`defaultOutcome`: a refusal releases the key, a final
 *   answer of the wholesaler is stored);
 * - without a key nobody can ask for an order again: a row stored but never sent is removed (best
 *   effort; if the database is down, it stays).
 */
async function failedPlacement(
  deps: OrderDeps,
  input: PlaceOrderInput,
  progress: Progress,
  error: unknown,
): Promise<ApiError> {
  const p = progress.placement;
  const failure = p?.maybeSent && !isDecidedAnswer(error) ? outcomeUnknownError(p, error) : asApiError(error);
  const withKey = input.idempotency != null;
  if (!withKey && progress.mayBeStored && progress.orderId !== undefined && !p?.maybeSent)
    await deleteUnsentOrder(deps.db, progress.orderId).catch(() => {});
  const keyOutcome: IdempotencyOutcome =
    failure.kind === 'order_rejected'
      ? 'store'
      : failure.kind === 'order_outcome_unknown' || (progress.mayBeStored && failure.status >= 500)
        ? 'reopen'
        : defaultOutcome(failure.status, failure.kind);
  return new ApiError(failure.kind, failure.message, { ...failure.options, idempotencyKey: keyOutcome });
}

/** Anything thrown, as the error the client gets: an unavailable database is a 503, a bug a 500. */
function asApiError(error: unknown): ApiError {
  if (isApiError(error)) return error;
  return databaseErrorToApiError(error) ?? unexpectedError(error);
}

/**
 * The answers this module gives on purpose (a rejection, an open outcome, the wholesaler's own error when
 * it did not take the order). Anything else after sending, a database error above all, says nothing
 * about the order and must not reach the client as a 5xx it could answer by ordering again.
 */
function isDecidedAnswer(error: unknown): boolean {
  return isApiError(error) && error.kind !== 'internal_error' && error.kind !== 'service_unavailable';
}

/** A retry found the order stored: answer from it, or settle what an earlier attempt left open. */
async function resume(p: Placement): Promise<OrderResult> {
  switch (p.order.state) {
    case 'confirmed':
    case 'queued_night_mode':
      return result(p);
    case 'rejected':
      throw rejectedError(p);
    case 'not_placed':
      return send(p, 2);
    case 'sending':
    case 'unknown':
      return reconcile(p, 1);
  }
}

/** Sends `bestellen` (`sendsLeft` counts this one) and settles the order from what comes back. */
async function send(p: Placement, sendsLeft: number): Promise<OrderResult> {
  if (p.order.state !== 'sending') await saveOrderChange(p.deps, p.order, { state: 'sending', status: null });
  // The record's lines exist before the wholesaler can answer (idempotent for a resent order).
  await ensureOrderLines(p.deps.db, p.order.id, orderLineRows(p.request));
  p.maybeSent = true;
  const outcome = await callWholesalerRaw(
    p.deps.upstream,
    p.wholesaler,
    bestellen,
    p.credentials,
    toMsv3OrderRequest(p.order.bestellungId, p.request, p.deps.upstream.clientSoftwareId),
  );
  if (outcome.ok) {
    if (outcome.value.nightMode) return settle(p, 'queued_night_mode');
    return settleWithAnswer(p, outcome.value.subOrders);
  }
  if (!outcome.error.maybeDelivered) {
    await saveOrderChange(p.deps, p.order, { state: 'not_placed', status: null });
    throw apiErrorFromUpstream(outcome.error, p.wholesalerId);
  }
  await saveOrderChange(p.deps, p.order, { state: 'unknown', status: null });
  // The gateway is shutting down: no time to ask; the retry with the key reconciles (docs/resilience.md).
  if (outcome.error.reason === 'shutdown') throw outcomeUnknownError(p);
  p.log.warn(
    { order_id: p.order.id, wholesaler: p.wholesalerId, reason: outcome.error.reason },
    'order sent but its answer was lost; reconciling with bestellstatusAbfragen',
  );
  return reconcile(p, sendsLeft - 1, outcome.error);
}

/**
 * Asks `bestellstatusAbfragen` what became of the order; sends again (same Id) only if the Id is unknown.
 * `failure`: why the last `bestellen` gave no answer, answered when the Id stays unknown after the resend.
 */
async function reconcile(p: Placement, sendsLeft: number, failure?: UpstreamError): Promise<OrderResult> {
  const status = await callWholesalerRaw(
    p.deps.upstream,
    p.wholesaler,
    bestellstatusAbfragen,
    p.credentials,
    {
      clientSoftwareId: p.deps.upstream.clientSoftwareId,
      orderId: p.order.bestellungId,
    },
  );
  p.log.info(
    {
      order_id: p.order.id,
      wholesaler: p.wholesalerId,
      status: status.ok ? status.value.status : status.error.reason,
    },
    'order reconciled with bestellstatusAbfragen',
  );
  if (!status.ok) throw outcomeUnknownError(p, undefined, status.error);
  switch (status.value.status) {
    case 'BestellantwortVerfuegbar':
      return settleWithAnswer(p, status.value.subOrders);
    case 'BestellantwortNichtVerfuegbar':
      // Known, so it was taken; its answer comes later (night mode) or is gone. Never send it again.
      return settle(p, 'queued_night_mode');
    case 'KennungUnbekannt':
      if (sendsLeft > 0) {
        p.log.warn(
          { order_id: p.order.id, wholesaler: p.wholesalerId },
          'order unknown to the wholesaler; sending it again with the same Bestellung Id',
        );
        return send(p, sendsLeft);
      }
      if (failure === undefined) throw outcomeUnknownError(p);
      // Sent twice, unknown twice: the wholesaler did not take it. Report why; a retry sends the same Id.
      await saveOrderChange(p.deps, p.order, { state: 'not_placed', status: null });
      throw apiErrorFromUpstream(failure, p.wholesalerId);
  }
}

async function settleWithAnswer(p: Placement, answer: SubOrderAnswer[]): Promise<OrderResult> {
  if (placementOfAnswer(p.request, answer) === 'rejected') {
    await saveOrderChange(p.deps, p.order, { state: 'rejected', answer, status: 'available' });
    throw rejectedError(p);
  }
  return settle(p, 'confirmed', answer);
}

/** `answer`: the sub-orders of a day-mode answer; none for an order taken without one (night mode). */
async function settle(
  p: Placement,
  state: 'confirmed' | 'queued_night_mode',
  answer?: SubOrderAnswer[],
): Promise<OrderResult> {
  await saveOrderChange(p.deps, p.order, {
    state,
    ...(answer === undefined ? {} : { answer }),
    status: statusOfState(state),
  });
  return result(p);
}

function result(p: Placement): OrderResult {
  const answer = p.order.state === 'queued_night_mode' ? null : ((p.order.answer ?? []) as SubOrderAnswer[]);
  const subOrders = subOrderResults(p.order.bestellungId, p.request, answer);
  return {
    request_id: p.order.bestellungId,
    status: p.order.state === 'queued_night_mode' ? 'queued_night_mode' : 'confirmed',
    wholesaler: p.wholesalerId,
    dry_run: false,
    items: subOrders.flatMap((sub) => sub.items),
    order_id: p.order.id,
    order_label: subOrders[0]?.order_label ?? null,
    placement_status: placementStatusOf(p.order.state, p.request, p.order.answer),
    sub_orders: subOrders,
  };
}

/** 422 with every sub-order's `Auftragsfehler` in the message, the first one's texts in `upstream`. */
function rejectedError(p: Placement): ApiError {
  const rejections = rejectionsOf(p.request, (p.order.answer ?? []) as SubOrderAnswer[]).map(
    ({ subOrder, rejection }) => ({
      subOrder,
      // The wholesaler's texts, made safe for the error body as in wholesalers/upstream-errors.ts.
      error_code: sanitizeUntrustedText(rejection.error_code, 20),
      user_text: sanitizeUntrustedText(rejection.user_text),
      technical_text: sanitizeUntrustedText(rejection.technical_text),
    }),
  );
  const several = p.request.subOrders.length > 1;
  const text =
    rejections.length === 0
      ? 'no reason given'
      : rejections
          .map((r) => `${several ? `${r.subOrder.orderLabel}: ` : ''}${r.user_text} (${r.error_code})`)
          .join('; ');
  const first = rejections[0];
  return new ApiError('order_rejected', `${p.wholesalerId} rejected order ${p.order.id}: ${text}`, {
    wholesaler: p.wholesalerId,
    orderId: p.order.id,
    upstream: {
      kind: 'Auftragsfehler',
      ...(first === undefined
        ? {}
        : { error_code: first.error_code, user_text: first.user_text, technical_text: first.technical_text }),
    },
  });
}

/**
 * 504 naming the order. `cause`: the gateway's own failure (e.g. its database) after sending; without
 * it, the wholesaler's answer and status could not be read, the status for the reason `unreadable`.
 */
function outcomeUnknownError(p: Placement, cause?: unknown, unreadable?: UpstreamError): ApiError {
  const next = p.withKey
    ? 'Retry with the same Idempotency-Key to reconcile it'
    : `Do not send it again: ask GET /v1/orders/${p.order.id}/status?wholesaler=${encodeURIComponent(p.wholesalerId)} until the wholesaler reports it (send an Idempotency-Key next time to retry safely)`;
  const statusFailure =
    unreadable === undefined
      ? ''
      : ` (the status query: ${apiErrorFromUpstream(unreadable, p.wholesalerId).message.replace(/\.$/, '')})`;
  const why =
    cause === undefined
      ? `neither its answer nor its status could be read${statusFailure}`
      : 'the gateway could not record its outcome';
  return new ApiError(
    'order_outcome_unknown',
    `Order ${p.order.id} was sent to ${p.wholesalerId}, but ${why}. ${next}.`,
    {
      wholesaler: p.wholesalerId,
      orderId: p.order.id,
      retryAfter: 5,
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** The idempotency fingerprint already guarantees this; a stored order never answers someone else's request. */
function checkSameOrder(
  order: StoredOrder,
  stored: StoredOrderRequest,
  caller: Caller,
  credentials: Credentials,
  wholesalerId: string,
  request: StoredOrderRequest,
): void {
  const same =
    order.accountId === caller.accountId &&
    order.mode === caller.mode &&
    order.wholesaler === wholesalerId &&
    order.customerId === credentials.username &&
    stored.subOrders.length === request.subOrders.length &&
    stored.subOrders.every((sub, i) => {
      const other = request.subOrders[i]!;
      return (
        sub.orderType === other.orderType &&
        sub.orderLabel === other.orderLabel &&
        sub.containerId === other.containerId &&
        JSON.stringify(sub.lines) === JSON.stringify(other.lines)
      );
    });
  if (!same) {
    throw new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key already placed a different order; use a new key for a new order.',
      { param: 'Idempotency-Key', wholesaler: wholesalerId },
    );
  }
}
