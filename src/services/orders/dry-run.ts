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
import { fetchContractData } from '../contracts.js';
import { type CutoffOutlook, cutoffOutlook, type NextCutoff } from './cutoff.js';
import { type DeliveryPreference, type OrderItemInput, type OrderLine, orderLines } from './request.js';
import type { OrderDeps } from './state.js';
import { type OrderItemResult, type OrderResult, orderItem } from './view.js';

/**
 * POST /v1/orders?dry_run=true: validates without placing (MSV3 has no validate-only order, docs/msv3.md
 * "Orders"). The same validation as a real order, then the contract (`vertragsdatenAbfragen`: the order type
 * NORMAL is always agreed; the next cut-off from `Bestellfenster`/`Sondertag`) and the current
 * availability (`verfuegbarkeitAnfragen`, 50 articles per call). Nothing is stored and `bestellen` is never
 * called.
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
  /** The request item it concerns (its first index, for merged lines). */
  item?: number;
}

export interface DryRunResult extends OrderResult {
  status: 'dry_run';
  dry_run: true;
  /** Additive: what the dry run checked. */
  checks: {
    order_type: 'normal';
    order_type_agreed: true;
    next_cutoff: NextCutoff | null;
    warnings: DryRunWarning[];
  };
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
  input: { wholesaler: string; items: OrderItemInput[] },
): Promise<DryRunResult> {
  const wholesaler = await deps.upstream.registry.resolve(tenant, input.wholesaler);
  assertSupports(wholesaler, bestellen);
  const lines = orderLines(input.items, wholesaler);
  const contract = await fetchContractData(deps.upstream, wholesaler, credentials);
  const outlook = cutoffOutlook(contract, deps.clock.now());
  const articles = await availabilityOf(deps, wholesaler, credentials, lines);

  const warnings = cutoffWarnings(outlook);
  const items = lines.map((line) => {
    const item = forecast(line, articles.get(line.pzn));
    const index = line.from[0]!;
    if (item.quantity_confirmed < item.quantity_ordered) {
      warnings.push({
        code: 'not_fully_available',
        item: index,
        message: `items[${index}] (${line.pzn}): ${item.quantity_confirmed} of ${item.quantity_ordered} would be delivered with delivery_preference ${line.preference}.`,
      });
    }
    if (item.substitution !== null && item.substitution.reason !== 'proposal') {
      warnings.push({
        code: 'substituted',
        item: index,
        message: `items[${index}] (${line.pzn}) would be delivered as ${item.substitution.pzn} (${item.substitution.reason}).`,
      });
    }
    return item;
  });
  return {
    request_id: newUuid(),
    status: 'dry_run',
    wholesaler: input.wholesaler,
    dry_run: true,
    items,
    checks: { order_type: 'normal', order_type_agreed: true, next_cutoff: outlook.next, warnings },
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
