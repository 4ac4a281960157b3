import type { Pzn } from '../msv3/model.js';
import type {
  AvailabilityArticle,
  AvailabilityPart,
  AvailabilityRequest,
  AvailabilityResponse,
} from '../msv3/operations/verfuegbarkeit-anfragen.js';
import type {
  BulkAvailabilityRequest,
  BulkAvailabilityResponse,
} from '../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { MAX_BULK_PZNS } from '../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { rejectDuplicates } from './business-rules.js';
import { articleFor, hasValidCheckDigit, inStock } from './catalogue.js';
import type { RequestContext } from './context.js';
import { wholesalerOfTenant } from './endpoint-path.js';
import { authorizationFault, validationFault } from './faults.js';
import {
  partWithoutDelivery,
  planSupply,
  type SupplyTerms,
  substitutionForVersion,
  suppliedPart,
  supplyTermsAt,
} from './supply.js';

/**
 * verfuegbarkeitAnfragen and verfuegbarkeitAnfragenBulk. The answers keep every rule of docs/msv3.md
 * "Availability answers": parts add up to the requested quantity, each Typ at most once (≤ 5 parts),
 * Normal/Verbund with Grund KeineAngabe and (in specific answers) a time and tour, every other Typ with a
 * real Grund, Tourabweichung only on Normal/Verbund, and a substitution covering all parts. `@Bedarf` /
 * `@EinsAusNBedarf` are read but do not change the answer (the wholesaler's shortage optimisation is not
 * simulated).
 */

export function assessArticle(pzn: Pzn, quantity: number, terms: SupplyTerms): AvailabilityArticle {
  const { version } = terms;
  const plan = planSupply(articleFor(pzn, terms.wholesaler), quantity, terms.contract, terms.wholesaler);
  const parts: AvailabilityPart[] = plan.allocations.map((a) => suppliedPart(a, plan, terms, false));
  if (plan.shortfall > 0) {
    // Teildefekt ("only part of the quantity") exists in availability answers only.
    const reason = parts.length > 0 ? 'Teildefekt' : plan.shortfallReason;
    parts.push(partWithoutDelivery('NichtLieferbar', plan.shortfall, reason, version));
  }
  const substitution = substitutionForVersion(plan.substitution, version);
  return { requestedQuantity: quantity, requestedPzn: pzn, ...(substitution ? { substitution } : {}), parts };
}

export function answerAvailability(ctx: RequestContext, request: AvailabilityRequest): AvailabilityResponse {
  rejectDuplicates(
    request.articles.map((a) => a.pzn),
    'PZN',
  );
  const terms = supplyTermsAt(
    ctx.version,
    ctx.customer.contract,
    ctx.now,
    ctx.env.calendar,
    wholesalerOfTenant(ctx.tenant.name),
  );
  return {
    id: request.id,
    responseType: ctx.customer.contract.specificAvailability ? 'Spezifisch' : 'Unspezifisch',
    articles: request.articles.map((a) => assessArticle(a.pzn, a.quantity, terms)),
  };
}

const BLOCK_SIZE = 100_000;

/** Bulk answers list the PZNs with units for the next tour; a block lists only PZNs with a valid check digit. */
export function answerBulkAvailability(
  ctx: RequestContext,
  request: BulkAvailabilityRequest,
): BulkAvailabilityResponse {
  if (!ctx.customer.contract.bulkAvailability) {
    throw authorizationFault('verfuegbarkeitAnfragenBulk', 'VerfuegbarkeitBulkVereinbart');
  }
  const q = request.query;
  if (q.kind === 'list') {
    rejectDuplicates(q.pzns, 'PZN');
    const wholesaler = wholesalerOfTenant(ctx.tenant.name);
    return { id: request.id, availablePzns: q.pzns.filter((pzn) => inStock(pzn, wholesaler)) };
  }
  if (!/^[0-9]{3}00000$/.test(q.firstPzn)) {
    throw validationFault(
      `PznBlock ${q.firstPzn} does not start a block (must end in 00000)`,
      'Ein PZN-Block muss mit 00000 enden.',
    );
  }
  const first = Number(q.firstPzn);
  const availablePzns: Pzn[] = [];
  for (let n = first; n < first + BLOCK_SIZE && availablePzns.length < MAX_BULK_PZNS; n++) {
    const pzn = String(n).padStart(8, '0');
    if (hasValidCheckDigit(pzn) && inStock(pzn, wholesalerOfTenant(ctx.tenant.name))) availablePzns.push(pzn);
  }
  return { id: request.id, availablePzns };
}
