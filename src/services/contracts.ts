import type { Tenant } from '../core/caller.js';
import type { Credentials } from '../msv3/credentials.js';
import type { Msv3Version } from '../msv3/envelope.js';
import {
  type ContractDataResponse,
  type VertragsdatenTag,
  vertragsdatenAbfragen,
} from '../msv3/operations/vertragsdaten-abfragen.js';
import { callWholesaler, type UpstreamDeps } from '../wholesalers/call.js';
import { capabilitiesOfVersion, type ResolvedWholesaler } from '../wholesalers/registry.js';

/**
 * GET /v1/contracts → `vertragsdatenAbfragen` (docs/msv3.md "Contract data"). `delivery_windows[].closes_at`
 * is the order cut-off (`Endezeit`) of a weekly order window, not a delivery time. Additive fields keep
 * what the documented fields leave out: the main order time of each window, v2 special days, the specific-answer
 * agreement, per-order-type terms, v1 `GueltigAb`.
 */

type Weekday = 'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday';

const DAYS: Record<VertragsdatenTag, Weekday> = {
  Mo: 'monday',
  Di: 'tuesday',
  Mi: 'wednesday',
  Do: 'thursday',
  Fr: 'friday',
  Sa: 'saturday',
  So: 'sunday',
};

export interface ContractResult {
  wholesaler: string;
  customer_id: string;
  capabilities: {
    bulk_availability: boolean;
    return_offers: boolean;
    substitution: boolean;
    order_types: { normal: boolean; batch: boolean; special: boolean; shipping: boolean };
    specific_availability: boolean;
  };
  delivery_windows: {
    day: Weekday;
    closes_at: string;
    main_order_time: { day: Weekday; time: string } | null;
  }[];
  special_days: { date: string; windows: { closes_at: string; main_order_time: string }[] }[];
  order_type_terms: {
    normal: { max_free_order_labels: number };
    batch: { agreed: boolean; max_free_order_labels: number };
    special: { agreed: boolean; max_free_order_labels: number };
    shipping: { agreed: boolean; max_free_order_labels: number; complete_containers_only: boolean };
  };
  valid_from: string | null;
  msv3_version: Msv3Version;
}

export async function fetchContract(
  deps: UpstreamDeps,
  tenant: Tenant,
  credentials: Credentials,
  wholesalerId: string,
): Promise<ContractResult> {
  const wholesaler = await deps.registry.resolve(tenant, wholesalerId);
  const contract = await fetchContractData(deps, wholesaler, credentials);
  return toContract(wholesalerId, wholesaler.version, contract);
}

/** `manuelleAbfrage` is true: every call through the API is on someone's demand, not the daily sync. */
export async function fetchContractData(
  deps: UpstreamDeps,
  wholesaler: ResolvedWholesaler,
  credentials: Credentials,
): Promise<ContractDataResponse> {
  const { value } = await callWholesaler(deps, wholesaler, vertragsdatenAbfragen, credentials, {
    clientSoftwareId: deps.clientSoftwareId,
    manualQuery: true,
  });
  return value;
}

/** What a wholesaler can do for this customer: its version's functions minus the contract-gated ones not agreed. */
export function capabilitiesFromContract(version: Msv3Version, contract: ContractDataResponse): string[] {
  return capabilitiesOfVersion(version).filter((capability) => {
    if (capability === 'bulk_availability') return contract.bulkAvailabilityAgreed;
    if (capability === 'return_offers') return contract.takeBackOffersAgreed;
    return true;
  });
}

function toContract(wholesaler: string, version: Msv3Version, c: ContractDataResponse): ContractResult {
  const { NORMAL, STAPEL, SONDER, VERSAND } = c.orderTypes;
  return {
    wholesaler,
    customer_id: c.customerId,
    capabilities: {
      bulk_availability: c.bulkAvailabilityAgreed,
      return_offers: c.takeBackOffersAgreed,
      substitution: c.substitutionAgreed,
      order_types: { normal: true, batch: STAPEL.agreed, special: SONDER.agreed, shipping: VERSAND.agreed },
      specific_availability: c.specificAvailabilityAgreed,
    },
    delivery_windows: c.orderWindows.map((w) => ({
      day: DAYS[w.day],
      closes_at: hoursAndMinutes(w.cutoff),
      main_order_time:
        w.mainOrderTime === undefined
          ? null
          : { day: DAYS[w.mainOrderTime.day], time: hoursAndMinutes(w.mainOrderTime.time) },
    })),
    special_days: c.specialDays.map((d) => ({
      date: plainDate(d.date),
      windows: d.windows.map((w) => ({
        closes_at: hoursAndMinutes(w.cutoff),
        main_order_time: hoursAndMinutes(w.mainOrderTime),
      })),
    })),
    order_type_terms: {
      normal: { max_free_order_labels: NORMAL.maxFreeOrderLabels },
      batch: { agreed: STAPEL.agreed, max_free_order_labels: STAPEL.maxFreeOrderLabels },
      special: { agreed: SONDER.agreed, max_free_order_labels: SONDER.maxFreeOrderLabels },
      shipping: {
        agreed: VERSAND.agreed,
        max_free_order_labels: VERSAND.maxFreeOrderLabels,
        complete_containers_only: VERSAND.completeContainersOnly,
      },
    },
    valid_from: c.validFrom === undefined ? null : plainDate(c.validFrom),
    msv3_version: version,
  };
}

/** `hh:mm:00` → `hh:mm`. */
function hoursAndMinutes(time: string): string {
  return time.slice(0, 5);
}

/** xs:date may carry a zone suffix (`2026-12-24+01:00`); the API shows the calendar date only. */
function plainDate(date: string): string {
  return /^\d{4}-\d{2}-\d{2}/.test(date) ? date.slice(0, 10) : date;
}
