import { toLocalDateTime } from '../lib/local-date-time.js';
import type { BestellungTyp, Defektgrund, Substitutionsgrund } from '../msv3/model.js';
import type {
  AvailabilityPart,
  Substitution as Msv3Substitution,
  OrderPart,
} from '../msv3/operations/anteile.js';

/**
 * MSV3 delivery parts (`Anteile`) and substitutions as the API shows them (docs/wholesalers.md
 * "Availability", plus additive fields). Shared by availability and order answers; MSV3 enum values become
 * lower-case English.
 */

/** `Typ` of a part → `type`. The last four occur in order answers only. */
export const DELIVERY_TYPES: Record<BestellungTyp, string> = {
  Normal: 'normal',
  Verbund: 'network',
  Nachlieferung: 'backorder',
  Dispo: 'special_procurement',
  NichtLieferbar: 'not_deliverable',
  KeineLieferungAberNormalMoeglich: 'not_delivered_normal_possible',
  KeineLieferungAberVerbundMoeglich: 'not_delivered_network_possible',
  KeineLieferungAberNachlieferungMoeglich: 'not_delivered_backorder_possible',
  KeineLieferungAberDispoMoeglich: 'not_delivered_special_procurement_possible',
};

/**
 * `Grund` (defect reason) → `reason`; `KeineAngabe` ("no reason", mandatory for normal and network parts)
 * becomes null. v1 `NichtLieferbar` and its v2 renaming `HerstellerNichtLieferbar` are one reason.
 */
export const DEFECT_REASONS: Record<Defektgrund, string | null> = {
  KeineAngabe: null,
  FehltZurzeit: 'out_of_stock',
  NichtLieferbar: 'manufacturer_cannot_deliver',
  HerstellerNichtLieferbar: 'manufacturer_cannot_deliver',
  NurDirekt: 'direct_from_manufacturer_only',
  NichtGefuehrt: 'not_carried',
  ArtikelNrUnbekannt: 'unknown_article',
  AusserHandel: 'withdrawn_from_market',
  KeinBezug: 'no_supply_for_customer',
  Transportausschluss: 'excluded_from_transport',
  Teildefekt: 'partial_shortage',
};

export const SUBSTITUTION_REASONS: Record<Substitutionsgrund, string> = {
  Nachfolgeprodukt: 'successor_product',
  ReUndParallelImport: 'reimport_or_parallel_import',
  Vorschlag: 'proposal',
};

export interface DeliveryPortion {
  type: string;
  /** Null when the wholesaler sent a nil `Menge` (allowed, e.g. in unspecific answers). */
  quantity: number | null;
  tour: string | null;
  /** Only in order answers (`TourId`). */
  tour_id?: string | null;
  /** Local date-time `YYYY-MM-DDThh:mm:ss`, or null when the wholesaler gave none. */
  estimated_at: string | null;
  /** The offset the wholesaler wrote with the time (`+01:00`), or null. */
  estimated_at_offset: string | null;
  reason: string | null;
  /** v2 `Tourabweichung`: the part cannot go with the next tour (cold chain, narcotics …); null in v1. */
  tour_deviation: boolean | null;
}

export interface SubstitutionInfo {
  reason: string;
  /** Why the requested PZN itself is not delivered. */
  defect_reason: string | null;
  /** The PZN that would be delivered instead, 8 digits. */
  pzn: string;
}

// The lookups made for every delivery part go through Maps: a keyed load into one of the objects above,
// whose keys vary from part to part, is megamorphic in V8 and costs several times a Map.get.
const deliveryTypeOf: ReadonlyMap<string, string> = new Map(Object.entries(DELIVERY_TYPES));
const defectReasonOf: ReadonlyMap<string, string | null> = new Map(Object.entries(DEFECT_REASONS));

/** `forOrders`: add `tour_id` (docs/msv3.md "Order answers": only in order answers). */
export function toDeliveryPortion(part: AvailabilityPart | OrderPart, forOrders = false): DeliveryPortion {
  const time = part.deliveryTime === null ? null : toLocalDateTime(part.deliveryTime);
  const portion: DeliveryPortion = {
    type: deliveryTypeOf.get(part.type)!,
    quantity: part.quantity,
    tour: part.tour ?? null,
    estimated_at: time?.local ?? null,
    estimated_at_offset: time?.offset ?? null,
    reason: defectReasonOf.get(part.defectReason) ?? null,
    tour_deviation: part.tourDeviation ?? null,
  };
  if (forOrders) portion.tour_id = (part as OrderPart).tourId ?? null;
  return portion;
}

export function toSubstitution(substitution: Msv3Substitution | undefined): SubstitutionInfo | null {
  if (substitution === undefined) return null;
  return {
    reason: SUBSTITUTION_REASONS[substitution.reason],
    defect_reason: defectReasonOf.get(substitution.defectReason) ?? null,
    pzn: substitution.deliveredPzn,
  };
}
