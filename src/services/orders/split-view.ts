import type { ApiError } from '../../core/errors.js';
import type { PlannedLine, SplitLineRequest } from './split-plan.js';
import type { OrderResult } from './view.js';

/** What became of one wholesaler's availability question while planning. */
export interface WholesalerAvailability {
  wholesaler: string;
  /** Null when it answered; else why it got no lines. */
  error: { error: string; message: string } | null;
}

/** The stored plan (`order_splits.plan`): never a credential, only each login's user name. */
export interface SplitPlan {
  version: 1;
  /** Null for a dry run (nothing stored). */
  id: string | null;
  lines: PlannedLine[];
  wholesalers: WholesalerAvailability[];
  orders: {
    wholesaler: string;
    /** The MSV3 user name the order is placed with; a retry must use the same. */
    customer_id: string;
    /** Fixed before anything is sent; null in a dry run. */
    bestellung_id: string | null;
    order_id: string | null;
    lines: SplitLineRequest[];
  }[];
}

/** One wholesaler order's placement: its answer, or the error it ended in. */
export interface ChildOutcome {
  result: OrderResult | null;
  error: ApiError | null;
}

type OrderOutcome = 'planned' | 'confirmed' | 'queued_night_mode' | 'rejected' | 'outcome_unknown' | 'failed';

/** An order in one of these is answered for good; any other makes the split `incomplete`. */
const FINISHED: ReadonlySet<OrderOutcome> = new Set([
  'planned',
  'confirmed',
  'queued_night_mode',
  'rejected',
]);

interface SplitOrderView {
  wholesaler: string;
  order_id: string | null;
  request_id: string | null;
  status: OrderOutcome;
  placement_status: string | null;
  error: { error: string; message: string } | null;
  items: { pzn: string; quantity: number; quantity_confirmed: number | null }[];
}

interface SplitLineView {
  pzn: string;
  quantity: number;
  quantity_planned: number;
  allocations: {
    wholesaler: string;
    quantity: number;
    order_id: string | null;
    status: OrderOutcome;
    quantity_confirmed: number | null;
  }[];
  quantity_undeliverable: number;
  undeliverable_reason: 'not_available' | 'wholesaler_unavailable' | null;
}

export interface SplitResult {
  split_id: string | null;
  status: 'dry_run' | 'complete' | 'incomplete';
  dry_run: boolean;
  wholesalers: WholesalerAvailability[];
  orders: SplitOrderView[];
  lines: SplitLineView[];
}

/** `outcomes`: one per order of the plan, in its order; null for a dry run. */
export function splitResult(plan: SplitPlan, outcomes: readonly ChildOutcome[] | null): SplitResult {
  const orders = plan.orders.map((order, i) => orderView(order, outcomes?.[i] ?? null));
  const someoneDown = plan.wholesalers.some((w) => w.error !== null);
  const finished = orders.every((o) => FINISHED.has(o.status));
  return {
    split_id: plan.id,
    status: outcomes === null ? 'dry_run' : finished ? 'complete' : 'incomplete',
    dry_run: outcomes === null,
    wholesalers: plan.wholesalers,
    orders,
    lines: plan.lines.map((line) => {
      const planned = line.allocations.reduce((sum, a) => sum + a.quantity, 0);
      return {
        pzn: line.pzn,
        quantity: line.quantity,
        quantity_planned: planned,
        allocations: line.allocations.map((a) => {
          const order = orders.find((o) => o.wholesaler === a.wholesaler)!;
          const item = order.items.find((i) => i.pzn === line.pzn);
          return {
            wholesaler: a.wholesaler,
            quantity: a.quantity,
            order_id: order.order_id,
            status: order.status,
            quantity_confirmed: item?.quantity_confirmed ?? null,
          };
        }),
        quantity_undeliverable: line.undeliverable,
        undeliverable_reason:
          line.undeliverable === 0 ? null : someoneDown ? 'wholesaler_unavailable' : 'not_available',
      };
    }),
  };
}

function orderView(order: SplitPlan['orders'][number], outcome: ChildOutcome | null): SplitOrderView {
  const answered = outcome?.result ?? null;
  const status: OrderOutcome =
    outcome === null
      ? 'planned'
      : answered !== null
        ? answered.status === 'queued_night_mode'
          ? 'queued_night_mode'
          : 'confirmed'
        : outcome.error?.kind === 'order_rejected'
          ? 'rejected'
          : outcome.error?.kind === 'order_outcome_unknown'
            ? 'outcome_unknown'
            : 'failed';
  return {
    wholesaler: order.wholesaler,
    order_id: order.order_id,
    request_id: order.bestellung_id,
    status,
    placement_status:
      answered?.placement_status ?? (status === 'rejected' || status === 'outcome_unknown' ? status : null),
    error: outcome?.error == null ? null : { error: outcome.error.kind, message: outcome.error.message },
    items: order.lines.map((line) => {
      const item = answered?.items.find((i) => i.pzn === line.pzn);
      return {
        pzn: line.pzn,
        quantity: line.quantity,
        quantity_confirmed: item === undefined || !item.answered ? null : item.quantity_confirmed,
      };
    }),
  };
}
