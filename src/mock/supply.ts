import type { Defektgrund, Msv3Version } from '../msv3/model.js';
import type { OrderPart, Substitution } from '../msv3/operations/anteile.js';
import type { Calendar } from './calendar.js';
import { type Article, articleFor } from './catalogue.js';
import type { Contract } from './contract.js';
import { type Departure, upcomingDepartures } from './tours.js';

/**
 * How a requested quantity is covered, shared by availability and order answers. The sources are tried
 * in order (next tour, partner warehouse, back order, special procurement) and each contributes at most
 * one portion, so every part type occurs at most once and the portions add up to the quantity.
 */

export type SupplyType = 'Normal' | 'Verbund' | 'Nachlieferung' | 'Dispo';

export interface Allocation {
  type: SupplyType;
  quantity: number;
}

export interface SupplyPlan {
  /** The article that is actually delivered (the successor when a substitution applies). */
  article: Article;
  substitution?: Substitution;
  allocations: Allocation[];
  /** Units no source can supply. */
  shortfall: number;
  /** `Grund` of the shortfall. */
  shortfallReason: Defektgrund;
}

export function planSupply(
  requested: Article,
  quantity: number,
  contract: Contract,
  wholesaler = '',
): SupplyPlan {
  let article = requested;
  let substitution: Substitution | undefined;
  if (requested.successor !== undefined) {
    // Without a substitution agreement the successor is only proposed; the requested article stays missing.
    substitution = {
      reason: contract.substitution ? 'Nachfolgeprodukt' : 'Vorschlag',
      defectReason: requested.shortfallReason,
      deliveredPzn: requested.successor,
    };
    if (contract.substitution) article = articleFor(requested.successor, wholesaler);
  }
  const allocations: Allocation[] = [];
  let left = quantity;
  const take = (type: SupplyType, available: number) => {
    const n = Math.min(left, available);
    if (n > 0) {
      allocations.push({ type, quantity: n });
      left -= n;
    }
  };
  take('Normal', article.stock);
  take('Verbund', article.networkStock);
  if (article.backOrder) take('Nachlieferung', left);
  if (article.specialProcurement) take('Dispo', left);
  return { article, substitution, allocations, shortfall: left, shortfallReason: article.shortfallReason };
}

/** When and with which tour each kind of portion arrives, for orders and enquiries at one instant. */
export interface Schedule {
  next: Departure;
  second: Departure;
  third: Departure;
  /** Special procurement takes about two days. */
  specialProcurement: Departure;
}

const TWO_DAYS_MS = 2 * 86_400_000;

export function scheduleAt(now: number, calendar: Calendar): Schedule {
  const [next, second, third] = upcomingDepartures(now, calendar, 3) as [Departure, Departure, Departure];
  const specialProcurement = upcomingDepartures(now + TWO_DAYS_MS, calendar, 1)[0]!;
  return { next, second, third, specialProcurement };
}

/** What the parts of an availability or order answer depend on besides the plan. */
export interface SupplyTerms {
  version: Msv3Version;
  contract: Contract;
  schedule: Schedule;
  calendar: Calendar;
  /** Which wholesaler the tenant plays (`wholesalerOfTenant`): some scenario articles differ by it. */
  wholesaler: string;
}

export function supplyTermsAt(
  version: Msv3Version,
  contract: Contract,
  now: number,
  calendar: Calendar,
  wholesaler: string,
): SupplyTerms {
  return { version, contract, schedule: scheduleAt(now, calendar), calendar, wholesaler };
}

/** A part whose type is a supply source: valid in availability answers (Verfuegbarkeit…) and order answers. */
export type SuppliedPart = Omit<OrderPart, 'type'> & { type: SupplyType };

/**
 * The part of an allocation that is (or, in an availability answer, would be) supplied: Normal and
 * Verbund leave with a tour, Dispo arrives with special procurement, Nachlieferung has no date yet.
 * Order answers are always specific and add the tour's TourId; availability answers name time and tour
 * only when the contract agrees specific answers.
 */
export function suppliedPart(
  a: Allocation,
  plan: SupplyPlan,
  terms: SupplyTerms,
  forOrders: boolean,
): SuppliedPart {
  const { version, schedule, calendar } = terms;
  const specific = forOrders || terms.contract.specificAvailability;
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
        ...(forOrders ? { tourId: departure.tour.id } : {}),
        tourDeviation: version === 2 ? plan.article.tourDeviation : undefined,
      };
    }
    case 'Nachlieferung':
      return partWithoutDelivery(a.type, a.quantity, 'FehltZurzeit', version);
    case 'Dispo':
      return {
        quantity: a.quantity,
        type: a.type,
        deliveryTime: specific ? calendar.dateTime(schedule.specialProcurement.arrivalAt) : null,
        defectReason: forVersion(plan.article.shortfallReason, version),
        tourDeviation: version === 2 ? false : undefined,
      };
  }
}

/** A part without delivery time or tour (back order, not deliverable, not delivered). */
export function partWithoutDelivery<T extends string>(
  type: T,
  quantity: number,
  reason: Defektgrund,
  version: Msv3Version,
): { quantity: number; type: T; deliveryTime: null; defectReason: Defektgrund; tourDeviation?: boolean } {
  return {
    quantity,
    type,
    deliveryTime: null,
    defectReason: forVersion(reason, version),
    tourDeviation: version === 2 ? false : undefined,
  };
}

/** The departure of a Normal or Verbund portion; a tour deviation (cold chain) skips the next tour. */
function departureFor(type: 'Normal' | 'Verbund', article: Article, schedule: Schedule): Departure {
  if (type === 'Normal') return article.tourDeviation ? schedule.second : schedule.next;
  return article.tourDeviation ? schedule.third : schedule.second;
}

/** `Grund` for a portion that is not delivered although this source could have supplied it. */
export function blockedReason(type: SupplyType, article: Article): Defektgrund {
  return type === 'Dispo' ? article.shortfallReason : 'FehltZurzeit';
}

/** Version-correct name of "the manufacturer cannot deliver" (v1 NichtLieferbar, v2 HerstellerNichtLieferbar). */
function forVersion(reason: Defektgrund, version: Msv3Version): Defektgrund {
  if (version === 1 && reason === 'HerstellerNichtLieferbar') return 'NichtLieferbar';
  if (version === 2 && reason === 'NichtLieferbar') return 'HerstellerNichtLieferbar';
  return reason;
}

export function substitutionForVersion(
  sub: Substitution | undefined,
  version: Msv3Version,
): Substitution | undefined {
  return sub === undefined ? undefined : { ...sub, defectReason: forVersion(sub.defectReason, version) };
}
