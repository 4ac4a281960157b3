import type { Tenant } from '../../core/caller.js';
import { newUuid } from '../../lib/ids.js';
import type { Credentials } from '../../msv3/credentials.js';
import type { BestellungTyp, Pzn } from '../../msv3/model.js';
import { bestellen } from '../../msv3/operations/bestellen.js';
import {
  type AvailabilityArticle,
  verfuegbarkeitAnfragen,
} from '../../msv3/operations/verfuegbarkeit-anfragen.js';
import { assertSupports, callWholesaler } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import type { OrderType } from '../order-types.js';
import { checkAgainstContract } from './contract-check.js';
import { type CutoffOutlook, cutoffOutlook, type NextCutoff } from './cutoff.js';
import {
  type DeliveryPreference,
  type OrderInput,
  type OrderLine,
  paramAt,
  plannedSubOrders,
  storedOrderRequest,
} from './request.js';
import type { OrderDeps } from './state.js';
import {
  type OrderItemResult,
  type OrderResult,
  orderItem,
  type SubOrderResult,
  subOrderHeader,
} from './view.js';

/**
 * POST /v1/orders?dry_run=true: validates without placing (MSV3 has no validate-only order, docs/orders.md
 * "Dry run"). The same validation as a real order, then the contract (`vertragsdatenAbfragen`: each
 * sub-order's type must be agreed, with its labels and containers, as for a real order, else the same
 * 422; the next cut-off from `Bestellfenster`/`Sondertag`, which MSV3 gives for all order types alike)
 * and the current availability (`verfuegbarkeitAnfragen`, 50 articles per call, per sub-order). Nothing is
 * stored and `bestellen` is never called.
 *
 * Findings are warnings, never errors: a wholesaler takes orders at any hour (a closed window only moves
 * the delivery to the next one; at night it answers in night mode), and availability changes by the
 * minute. `quantity_confirmed` is a forecast: the quantity the availability answer says would be
 * delivered within the item's `delivery_preference` (normal: normal parts; grouped: + network; backorder:
 * + back-orders; disposition: + special procurement).
 */

interface DryRunWarning {
  code:
    | 'no_order_window_today'
    | 'closed_for_today'
    | 'no_order_window'
    | 'not_fully_available'
    | 'substituted';
  message: string;
  /** The request item it concerns (its first index, for merged lines), within its sub-order. */
  item?: number;
  /** The sub-order of that item, when the order has `sub_orders`. */
  sub_order?: number;
}

interface SubOrderCheck {
  order_type: OrderType;
  order_type_agreed: true;
  next_cutoff: NextCutoff | null;
}

export interface DryRunResult extends OrderResult {
  status: 'dry_run';
  dry_run: true;
  /** Additive: what the dry run checked; `order_type` etc. of the first sub-order, each in `sub_orders`. */
  checks: SubOrderCheck & { warnings: DryRunWarning[]; sub_orders: SubOrderCheck[] };
}

const AVAILABILITY_CHUNK = 50;

const WITHIN_PREFERENCE: Record<DeliveryPreference, ReadonlySet<BestellungTyp>> = {
  normal: new Set(['Normal']),
  grouped: new Set(['Normal', 'Verbund']),
  backorder: new Set(['Normal', 'Verbund', 'Nachlieferung']),
  disposition: new Set(['Normal', 'Verbund', 'Nachlieferung', 'Dispo']),
};

export async function dryRunOrder(
  deps: OrderDeps,
  tenant: Tenant,
  credentials: Credentials,
  input: OrderInput & { wholesaler: string },
): Promise<DryRunResult> {
  const wholesaler = await deps.upstream.registry.resolve(tenant, input.wholesaler);
  assertSupports(wholesaler, bestellen);
  const planned = plannedSubOrders(input, wholesaler, deps.maxPositions);
  const contract = await deps.contracts.contractFor(deps.upstream, wholesaler, credentials);
  checkAgainstContract(contract, planned, input.wholesaler);
  const outlook = cutoffOutlook(contract, deps.clock.now());
  const articles = await Promise.all(
    planned.map((sub) => availabilityOf(deps, wholesaler, credentials, sub.lines)),
  );
  const bestellungId = newUuid();
  const request = storedOrderRequest(bestellungId, planned);

  const warnings = cutoffWarnings(outlook);
  const subOrders: SubOrderResult[] = request.subOrders.map((sub, subIndex) => {
    const where = planned[subIndex]!.at;
    const items = sub.lines.map((line) => {
      const item = forecast(line, articles[subIndex]!.get(line.pzn));
      const index = line.from[0]!;
      const at = { item: index, ...(where === '' ? {} : { sub_order: subIndex }) };
      const name = paramAt(where, `items[${index}]`);
      if (item.quantity_confirmed < item.quantity_ordered) {
        warnings.push({
          code: 'not_fully_available',
          ...at,
          message: `${name} (${line.pzn}): ${item.quantity_confirmed} of ${item.quantity_ordered} would be delivered with delivery_preference ${line.preference}.`,
        });
      }
      if (item.substitution !== null && item.substitution.reason !== 'proposal') {
        warnings.push({
          code: 'substituted',
          ...at,
          message: `${name} (${line.pzn}) would be delivered as ${item.substitution.pzn} (${item.substitution.reason}).`,
        });
      }
      return item;
    });
    return { ...subOrderHeader(sub), order_label: null, status: 'dry_run', error: null, items };
  });
  const checks = subOrders.map((sub) => ({
    order_type: sub.order_type,
    order_type_agreed: true as const,
    next_cutoff: outlook.next,
  }));
  return {
    request_id: bestellungId,
    status: 'dry_run',
    wholesaler: input.wholesaler,
    dry_run: true,
    items: subOrders.flatMap((sub) => sub.items),
    sub_orders: subOrders,
    checks: { ...checks[0]!, warnings, sub_orders: checks },
  };
}

async function availabilityOf(
  deps: OrderDeps,
  wholesaler: ResolvedWholesaler,
  credentials: Credentials,
  lines: readonly OrderLine[],
): Promise<Map<Pzn, AvailabilityArticle>> {
  const chunks: OrderLine[][] = [];
  for (let i = 0; i < lines.length; i += AVAILABILITY_CHUNK)
    chunks.push(lines.slice(i, i + AVAILABILITY_CHUNK));
  const answers = await Promise.all(
    chunks.map((chunk) =>
      callWholesaler(deps.upstream, wholesaler, verfuegbarkeitAnfragen, credentials, {
        clientSoftwareId: deps.upstream.clientSoftwareId,
        id: newUuid(),
        oneOfMany: false,
        articles: chunk.map((line) => ({
          pzn: line.pzn,
          quantity: line.quantity,
          demand: 'direkt' as const,
        })),
      }),
    ),
  );
  return new Map(answers.flatMap(({ value }) => value.articles.map((a) => [a.requestedPzn, a] as const)));
}

/** The item as the order would answer it now: availability within the line's delivery_preference. */
function forecast(line: OrderLine, article: AvailabilityArticle | undefined): OrderItemResult {
  return orderItem(line, article, WITHIN_PREFERENCE[line.preference], false);
}

function cutoffWarnings(outlook: CutoffOutlook): DryRunWarning[] {
  const next = outlook.next === null ? 'none within two weeks' : outlook.next.at;
  if (outlook.next === null) {
    return [
      { code: 'no_order_window', message: 'The contract lists no order window in the next two weeks.' },
    ];
  }
  if (outlook.no_window_today) {
    return [
      {
        code: 'no_order_window_today',
        message: `Today is a special day without order windows (no delivery); the order would go into the window closing at ${next}.`,
      },
    ];
  }
  if (outlook.closed_for_today) {
    return [
      {
        code: 'closed_for_today',
        message: `Today's last order window has closed; the order would go into the window closing at ${next}.`,
      },
    ];
  }
  return [];
}
