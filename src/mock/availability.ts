import type { Msv3Version, Pzn } from '../msv3/model.js';
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
import type { Calendar } from './calendar.js';
import { articleFor, hasValidCheckDigit, inStock } from './catalogue.js';
import type { RequestContext } from './context.js';
import type { Contract } from './contract.js';
import { authorizationFault, validationFault } from './faults.js';
import {
  type Allocation,
  departureFor,
  forVersion,
  planSupply,
  type Schedule,
  scheduleAt,
  substitutionForVersion,
} from './supply.js';

/**
 * verfuegbarkeitAnfragen and verfuegbarkeitAnfragenBulk. The answers keep every rule of PROTOCOL.md §2.2:
 * parts add up to the requested quantity, each Typ at most once (≤ 5 parts), Normal/Verbund with Grund
 * KeineAngabe and (in specific answers) a time and tour, every other Typ with a real Grund, Tourabweichung
 * only on Normal/Verbund, and a substitution covering all parts. `@Bedarf` / `@EinsAusNBedarf` are read
 * but do not change the answer (the wholesaler's shortage optimisation is not simulated).
 */

export interface AssessmentTerms {
  version: Msv3Version;
  contract: Contract;
  schedule: Schedule;
  calendar: Calendar;
}

export function assessArticle(pzn: Pzn, quantity: number, terms: AssessmentTerms): AvailabilityArticle {
  const { version, contract, schedule, calendar } = terms;
  const specific = contract.specificAvailability;
  const plan = planSupply(articleFor(pzn), quantity, contract);
  const v2 = version === 2;
  const part = (a: Allocation): AvailabilityPart => {
    switch (a.type) {
      case 'Normal':
      case 'Verbund': {
        const departure = departureFor(a.type, plan.article, schedule);
        return {
          quantity: a.quantity,
          type: a.type,
          deliveryTime: specific ? calendar.dateTime(departure.arrivalAt) : null,
          ...(specific ? { tour: departure.tour.name } : {}),
          defectReason: 'KeineAngabe',
          tourDeviation: v2 ? plan.article.tourDeviation : undefined,
        };
      }
      case 'Nachlieferung':
        return {
          quantity: a.quantity,
          type: a.type,
          deliveryTime: null,
          defectReason: 'FehltZurzeit',
          tourDeviation: v2 ? false : undefined,
        };
      case 'Dispo':
        return {
          quantity: a.quantity,
          type: a.type,
          deliveryTime: specific ? calendar.dateTime(schedule.specialProcurement.arrivalAt) : null,
          defectReason: forVersion(plan.article.shortfallReason, version),
          tourDeviation: v2 ? false : undefined,
        };
    }
  };
  const parts = plan.allocations.map(part);
  if (plan.shortfall > 0) {
    parts.push({
      quantity: plan.shortfall,
      type: 'NichtLieferbar',
      deliveryTime: null,
      // Teildefekt ("only part of the quantity") exists in availability answers only.
      defectReason: parts.length > 0 ? 'Teildefekt' : forVersion(plan.shortfallReason, version),
      tourDeviation: v2 ? false : undefined,
    });
  }
  const substitution = substitutionForVersion(plan.substitution, version);
  return { requestedQuantity: quantity, requestedPzn: pzn, ...(substitution ? { substitution } : {}), parts };
}

export function answerAvailability(ctx: RequestContext, request: AvailabilityRequest): AvailabilityResponse {
  rejectDuplicates(
    request.articles.map((a) => a.pzn),
    'PZN',
  );
  const terms: AssessmentTerms = {
    version: ctx.version,
    contract: ctx.customer.contract,
    schedule: scheduleAt(ctx.now, ctx.env.calendar),
    calendar: ctx.env.calendar,
  };
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
    return { id: request.id, availablePzns: q.pzns.filter(inStock) };
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
    if (hasValidCheckDigit(pzn) && inStock(pzn)) availablePzns.push(pzn);
  }
  return { id: request.id, availablePzns };
}
