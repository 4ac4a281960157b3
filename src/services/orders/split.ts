import type { Logger } from 'pino';
import type { Caller } from '../../core/caller.js';
import { ApiError, isApiError, unexpectedError } from '../../core/errors.js';
import type { Credentials } from '../../msv3/credentials.js';
import { normalisePzn } from '../../msv3/model.js';
import { databaseErrorToApiError } from '../../store/database-unavailable.js';
import { findSplit, insertSplitIfAbsent } from '../../store/order-splits.js';
import { deliverable } from '../availability/deliverable.js';
import { checkAvailability } from '../availability/single.js';
import { invalidPzn } from '../pzn-check.js';
import { distinctWholesalers } from '../wholesaler-preference.js';
import { gatewayOrderId, splitBestellungId, splitIdFor } from './ids.js';
import { placeOrder } from './placement.js';
import { ordersOfPlan, planSplit, type WholesalerOffer } from './split-plan.js';
import {
  type ChildOutcome,
  type SplitPlan,
  type SplitResult,
  splitResult,
  type WholesalerAvailability,
} from './split-view.js';
import type { OrderDeps } from './state.js';

/**
 * POST /v1/orders/split: one order's items over several wholesalers (docs/split-orders.md).
 *
 * 1. Every wholesaler of the request is asked for availability (at once); one that fails gets no lines,
 *    its error is listed. When none answers, the request fails with the first one's error.
 * 2. `planSplit` decides which wholesaler gets which line (full quantity first, then the rest at the next).
 * 3. The plan is stored (`order_splits`), keyed by the Idempotency-Key, with every wholesaler order's
 *    Bestellung Id and gateway order id fixed, before anything is sent. No credential is stored.
 * 4. Each wholesaler's order is placed with `placeOrder`, one after the other in order of preference,
 *    with the Bestellung Id of the plan: the single order's guarantees (stored before sending, status
 *    query after a lost answer, same Id on a resend) hold for each.
 * 5. A retry with the same key finds the stored plan and never plans again: `placeOrder` answers a
 *    placed order from what is stored and finishes one that is open or was not placed.
 * The answer is `complete` when every order was answered (taken or rejected), else `incomplete`, and
 * the route keeps the key open so that the retry with it finishes the rest.
 */

export interface SplitInput {
  /** Wholesaler ids in order of preference. */
  wholesalers: string[];
  items: { pzn: string; quantity: number }[];
  dryRun: boolean;
  /** Required to place; a dry run needs none. */
  idempotency: { key: string; firstUsedAt: number } | null;
  log?: Logger;
}

export async function splitOrder(
  deps: OrderDeps,
  caller: Caller,
  credentials: ReadonlyMap<string, Credentials>,
  input: SplitInput,
): Promise<SplitResult> {
  const items = validItems(input);
  distinctWholesalers(input.wholesalers);
  for (const wholesaler of input.wholesalers) await deps.upstream.registry.resolve(caller, wholesaler);
  if (input.dryRun)
    return splitResult(await newPlan(deps, caller, credentials, input.wholesalers, items), null);
  const key = input.idempotency;
  if (key === null) {
    throw new ApiError(
      'invalid_idempotency_key',
      'A split order needs an Idempotency-Key: it keys the stored plan, so that a retry finishes the split instead of ordering again. A dry run (`dry_run=true`) needs none.',
      { param: 'Idempotency-Key' },
    );
  }
  const splitId = splitIdFor({ ...caller, idempotencyKey: key.key, firstUsedAt: key.firstUsedAt });
  const plan = await storedOrNewPlan(deps, caller, credentials, input, items, splitId);
  checkSameLogins(plan, credentials);
  const outcomes: ChildOutcome[] = [];
  for (const order of plan.orders) {
    outcomes.push(await placeChild(deps, caller, credentials.get(order.wholesaler)!, order, input, key));
  }
  return splitResult({ ...plan, id: splitId }, outcomes);
}

/** The stored plan of this key, or a new one, stored before any order is placed. */
async function storedOrNewPlan(
  deps: OrderDeps,
  caller: Caller,
  credentials: ReadonlyMap<string, Credentials>,
  input: SplitInput,
  items: { pzn: string; quantity: number }[],
  splitId: string,
): Promise<SplitPlan> {
  // A stored plan may have placed orders already: a failure to read it must keep the key, never free it.
  const stored = await findSplit(deps.db, caller, splitId).catch(storageFailure);
  if (stored !== undefined) return stored.plan as SplitPlan;
  const plan = await newPlan(deps, caller, credentials, input.wholesalers, items, splitId);
  if (plan.orders.length === 0) return plan;
  // A lost answer may hide a stored plan: a failure keeps the key, so the retry reads the plan.
  const saved = await insertSplitIfAbsent(deps.db, deps.clock, { id: splitId, tenant: caller, plan }).catch(
    storageFailure,
  );
  return saved.plan as SplitPlan;
}

async function newPlan(
  deps: OrderDeps,
  caller: Caller,
  credentials: ReadonlyMap<string, Credentials>,
  wholesalers: readonly string[],
  items: { pzn: string; quantity: number }[],
  splitId?: string,
): Promise<SplitPlan> {
  const answers = await Promise.all(
    wholesalers.map((wholesaler) =>
      checkAvailability(deps.upstream, caller, credentials.get(wholesaler)!, { wholesaler, items }).then(
        (result) => ({ wholesaler, result, error: null }),
        (error: unknown) => ({ wholesaler, result: null, error: asApiError(error) }),
      ),
    ),
  );
  const failed = answers.filter((a) => a.error !== null);
  if (failed.length === answers.length) throw failed[0]!.error!;
  const offers: WholesalerOffer[] = answers.map(({ wholesaler, result }) => ({
    wholesaler,
    units: result === null ? null : new Map(result.items.map((item) => [item.pzn, deliverable(item).units])),
  }));
  const lines = planSplit(items, offers);
  const availability: WholesalerAvailability[] = answers.map(({ wholesaler, error }) => ({
    wholesaler,
    error: error === null ? null : { error: error.kind, message: error.message },
  }));
  return {
    version: 1,
    id: splitId ?? null,
    lines,
    wholesalers: availability,
    orders: ordersOfPlan(lines, wholesalers).map(({ wholesaler, lines: orderLines }) => {
      const bestellungId = splitId === undefined ? null : splitBestellungId(splitId, wholesaler);
      return {
        wholesaler,
        customer_id: credentials.get(wholesaler)!.username,
        bestellung_id: bestellungId,
        order_id: bestellungId === null ? null : gatewayOrderId(bestellungId),
        lines: orderLines,
      };
    }),
  };
}

/** One wholesaler's order through the single-order placement; its failure is this order's outcome. */
async function placeChild(
  deps: OrderDeps,
  caller: Caller,
  credentials: Credentials,
  order: SplitPlan['orders'][number],
  input: SplitInput,
  key: { key: string; firstUsedAt: number },
): Promise<ChildOutcome> {
  try {
    const result = await placeOrder(deps, caller, credentials, {
      wholesaler: order.wholesaler,
      items: order.lines.map((line) => ({ pzn: line.pzn, quantity: line.quantity })),
      idempotency: key,
      bestellungId: order.bestellung_id!,
      ...(input.log === undefined ? {} : { log: input.log }),
    });
    return { result, error: null };
  } catch (error) {
    return { result: null, error: asApiError(error) };
  }
}

function validItems(input: SplitInput): { pzn: string; quantity: number }[] {
  const seen = new Map<string, number>();
  return input.items.map((item, index) => {
    const pzn = normalisePzn(item.pzn);
    const param = `items[${index}].pzn`;
    const problem = invalidPzn(pzn);
    if (problem !== null) {
      throw new ApiError('invalid_request', `\`${param}\` ${problem.message} Nothing was sent.`, { param });
    }
    const earlier = seen.get(pzn);
    if (earlier !== undefined) {
      throw new ApiError(
        'invalid_request',
        `${param} repeats items[${earlier}].pzn (${pzn}); send one item with the total quantity.`,
        { param },
      );
    }
    seen.set(pzn, index);
    return { pzn, quantity: item.quantity };
  });
}

/** A retry must come from the same pharmacy logins the plan was made with (never the passwords). */
function checkSameLogins(plan: SplitPlan, credentials: ReadonlyMap<string, Credentials>): void {
  for (const order of plan.orders) {
    if (credentials.get(order.wholesaler)?.username === order.customer_id) continue;
    throw new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key already planned a split with other wholesalers or logins; use a new key for a new split.',
      { param: 'Idempotency-Key', wholesaler: order.wholesaler },
    );
  }
}

function asApiError(error: unknown): ApiError {
  if (isApiError(error)) return error;
  return databaseErrorToApiError(error) ?? unexpectedError(error);
}

/**
 * The database failed while the plan was read or written. The key stays with its request (`reopen`), so
 * the retry derives the same split id and finds the plan; freeing it would plan anew under another id.
 */
function storageFailure(error: unknown): never {
  const failure = asApiError(error);
  throw new ApiError(failure.kind, failure.message, { ...failure.options, idempotencyKey: 'reopen' });
}
