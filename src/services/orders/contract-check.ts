import { createHmac, randomBytes } from 'node:crypto';
import { ApiError } from '../../core/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { Credentials } from '../../msv3/credentials.js';
import type { Auftragsart } from '../../msv3/model.js';
import type { ContractDataResponse } from '../../msv3/operations/vertragsdaten-abfragen.js';
import type { UpstreamDeps } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { fetchContractData } from '../contracts.js';
import { AUFTRAGSART_OF, type OrderType } from '../order-types.js';
import { type PlannedSubOrder, paramAt } from './request.js';

/**
 * An order checked against the customer's contract (`vertragsdatenAbfragen`) before anything is sent
 * (docs/orders.md "Checked against the contract"):
 * - every type but normal needs `Vereinbart`: else 422 `order_type_not_agreed`;
 * - per type, at most `MaxAnzahlFreieAuftragskennungen` distinct labels of the client's own choosing (a
 *   sub-order without `order_label` gets the type's default label, which is not a free one): else 422
 *   `order_labels_exceeded`;
 * - with `NurKompletteGebinde`, a shipping container must arrive complete: one sub-order per container,
 *   and no line that lets the wholesaler deliver the rest later (`backorder`, `disposition`): else 422
 *   `complete_containers_only` (our reading of the term; MSV3 documents no more).
 * Orders of normal sub-orders with default labels (the `items` form as it always was) need no contract.
 */

/** Whether the order asks for anything the contract decides. */
export function needsContract(planned: readonly PlannedSubOrder[]): boolean {
  return planned.some((sub) => sub.type !== 'normal' || sub.labelChosen);
}

/** Throws the refusal of the first sub-order the contract does not allow. */
export function checkAgainstContract(
  contract: ContractDataResponse,
  planned: readonly PlannedSubOrder[],
  wholesalerId: string,
): void {
  for (const sub of planned) {
    if (sub.type === 'normal') continue;
    if (!contract.orderTypes[AUFTRAGSART_OF[sub.type] as Exclude<Auftragsart, 'NORMAL'>].agreed) {
      throw new ApiError(
        'order_type_not_agreed',
        `${what(sub)} is a ${sub.type} order (${AUFTRAGSART_OF[sub.type]}), which ${wholesalerId}'s contract with this customer does not include (Vereinbart is false). Order it as normal, or ask the wholesaler to agree ${sub.type} orders.`,
        { param: paramAt(sub.at, 'order_type'), wholesaler: wholesalerId },
      );
    }
  }
  for (const type of new Set(planned.map((sub) => sub.type)))
    checkFreeLabels(contract, planned, type, wholesalerId);
  if (contract.orderTypes.VERSAND.completeContainersOnly) checkCompleteContainers(planned, wholesalerId);
}

function checkFreeLabels(
  contract: ContractDataResponse,
  planned: readonly PlannedSubOrder[],
  type: OrderType,
  wholesalerId: string,
): void {
  const allowed = contract.orderTypes[AUFTRAGSART_OF[type]].maxFreeOrderLabels;
  const labels: string[] = [];
  for (const sub of planned) {
    if (sub.type !== type || !sub.labelChosen || labels.includes(sub.label)) continue;
    labels.push(sub.label);
    if (labels.length > allowed) {
      throw new ApiError(
        'order_labels_exceeded',
        `${what(sub)} brings the ${type} sub-orders to ${labels.length} order labels of their own (${labels.join(', ')}); ${wholesalerId}'s contract allows ${allowed} for ${type} orders (MaxAnzahlFreieAuftragskennungen). Reuse a label, or leave order_label out for the default label.`,
        { param: paramAt(sub.at, 'order_label'), wholesaler: wholesalerId },
      );
    }
  }
}

function checkCompleteContainers(planned: readonly PlannedSubOrder[], wholesalerId: string): void {
  const seen = new Map<string, PlannedSubOrder>();
  for (const sub of planned) {
    if (sub.type !== 'shipping' || sub.containerId === undefined) continue;
    const earlier = seen.get(sub.containerId);
    if (earlier !== undefined) {
      throw new ApiError(
        'complete_containers_only',
        `${what(sub)} uses container ${sub.containerId} of ${what(earlier)}; ${wholesalerId} ships complete containers only (NurKompletteGebinde), so one container belongs to one sub-order.`,
        { param: paramAt(sub.at, 'container_id'), wholesaler: wholesalerId },
      );
    }
    seen.set(sub.containerId, sub);
    for (const line of sub.lines) {
      if (line.preference !== 'backorder' && line.preference !== 'disposition') continue;
      const item = paramAt(sub.at, `items[${line.from[0]}]`);
      throw new ApiError(
        'complete_containers_only',
        `${item} (${line.pzn}) allows delivery_preference ${line.preference}, which delivers the rest later; ${wholesalerId} ships complete containers only (NurKompletteGebinde). Use normal or grouped in a shipping order.`,
        { param: `${item}.delivery_preference`, wholesaler: wholesalerId },
      );
    }
  }
}

function what(sub: PlannedSubOrder): string {
  return sub.at === '' ? 'The order' : sub.at;
}

/**
 * Contracts read to check orders, reused for `ttlMs` per wholesaler endpoint, user name and password.
 * The key holds no credential: an HMAC of user name and password under a key drawn at start, so only
 * the same login finds an entry again, and nothing stored can be turned back into the password.
 */
export interface ContractCache {
  contractFor(
    upstream: UpstreamDeps,
    wholesaler: ResolvedWholesaler,
    credentials: Credentials,
  ): Promise<ContractDataResponse>;
}

/** Enough for thousands of pharmacies at a few wholesalers; the oldest entry makes room. */
const MAX_ENTRIES = 10_000;

export function createContractCache(options: { clock: Clock; ttlMs: number }): ContractCache {
  const secret = randomBytes(32);
  const entries = new Map<string, { contract: ContractDataResponse; until: number }>();
  return {
    async contractFor(upstream, wholesaler, credentials) {
      if (options.ttlMs === 0) return fetchContractData(upstream, wholesaler, credentials);
      const key = createHmac('sha256', secret)
        .update(`${wholesaler.endpoint.target}\0${credentials.username}\0`)
        .update(credentials.password)
        .digest('base64');
      const now = options.clock.now();
      const cached = entries.get(key);
      if (cached !== undefined && cached.until > now) return cached.contract;
      const contract = await fetchContractData(upstream, wholesaler, credentials);
      entries.delete(key);
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(key, { contract, until: now + options.ttlMs });
      return contract;
    },
  };
}
