import type { Msv3Version } from '../msv3/envelope.js';
import type { Auftragsart } from '../msv3/model.js';
import type {
  ContractDataRequest,
  ContractDataResponse,
  OrderWindow,
  VertragsdatenTag,
} from '../msv3/operations/vertragsdaten-abfragen.js';
import type { Calendar } from './calendar.js';
import { CONTRACT_MARKERS, type ContractMarker } from './scenarios.js';
import { upcomingSpecialDays, weeklyTours } from './tours.js';

/**
 * The customer's contract terms. Everything is agreed by default except VERSAND; documented parts of the
 * user name switch single terms (`CONTRACT_MARKERS`), so a developer can test a gated function by
 * logging in as e.g. `apo1nobulk`.
 */

export interface Contract {
  customerId: string;
  bulkAvailability: boolean;
  takeBackOffers: boolean;
  substitution: boolean;
  specificAvailability: boolean;
  /** Order types besides NORMAL (always agreed). */
  orderTypes: Record<Exclude<Auftragsart, 'NORMAL'>, boolean>;
  /** `NurKompletteGebinde` of VERSAND. */
  completeContainersOnly: boolean;
}

function markersIn(customerId: string): Set<ContractMarker> {
  const lower = customerId.toLowerCase();
  return new Set((Object.keys(CONTRACT_MARKERS) as ContractMarker[]).filter((m) => lower.includes(m)));
}

export function contractFor(customerId: string): Contract {
  const m = markersIn(customerId);
  return {
    customerId,
    bulkAvailability: !m.has('nobulk'),
    takeBackOffers: !m.has('noreturns'),
    substitution: !m.has('nosubst'),
    specificAvailability: !m.has('unspecific'),
    orderTypes: { STAPEL: !m.has('normalonly'), SONDER: !m.has('normalonly'), VERSAND: m.has('versand') },
    completeContainersOnly: m.has('komplett'),
  };
}

export function orderTypeAgreed(contract: Contract, type: Auftragsart): boolean {
  return type === 'NORMAL' || contract.orderTypes[type];
}

const DAYS: readonly VertragsdatenTag[] = ['Mo', 'Di', 'Mi', 'Do', 'Fr', 'Sa', 'So'];
/** v1's `@GueltigAb`: MSV3 went live on 1 October 2013; the sandbox pretends every customer was there. */
const VALID_FROM = '2013-10-01';

function seconds(hhmm: string): string {
  return `${hhmm}:00`;
}

function orderWindows(): OrderWindow[] {
  return DAYS.flatMap((day) =>
    weeklyTours(day).map((tour) => ({
      day,
      cutoff: seconds(tour.cutoff),
      mainOrderTime: { day, time: seconds(tour.mainOrderTime) },
    })),
  );
}

export function contractData(
  contract: Contract,
  version: Msv3Version,
  request: ContractDataRequest,
  now: number,
  calendar: Calendar,
): ContractDataResponse {
  const versand = contract.orderTypes.VERSAND;
  return {
    customerId: contract.customerId,
    ...(version === 1 ? { validFrom: VALID_FROM } : { automaticRetrieval: request.manualQuery === false }),
    orderWindows: orderWindows(),
    orderTypes: {
      NORMAL: { maxFreeOrderLabels: 5 },
      STAPEL: { maxFreeOrderLabels: 1, agreed: contract.orderTypes.STAPEL },
      SONDER: { maxFreeOrderLabels: 1, agreed: contract.orderTypes.SONDER },
      VERSAND: {
        maxFreeOrderLabels: versand ? 1 : 0,
        agreed: versand,
        completeContainersOnly: contract.completeContainersOnly,
      },
    },
    substitutionAgreed: contract.substitution,
    specificAvailabilityAgreed: contract.specificAvailability,
    bulkAvailabilityAgreed: contract.bulkAvailability,
    takeBackOffersAgreed: contract.takeBackOffers,
    specialDays:
      version === 1
        ? []
        : upcomingSpecialDays(now, calendar).map((d) => ({
            date: d.date,
            windows: d.tours.map((t) => ({
              cutoff: seconds(t.cutoff),
              mainOrderTime: seconds(t.mainOrderTime),
            })),
          })),
  };
}
