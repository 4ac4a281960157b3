import { toLocalDateTime } from '../../lib/local-date-time.js';
import { normalisePzn } from '../../msv3/model.js';
import type {
  AssessedReturnPosition,
  RetoureGrund,
  RetourenAnteilTyp,
  ReturnPosition,
} from '../../msv3/operations/retourenavis.js';
import type { ReturnPortion } from '../../msv3/operations/retourenavis-ankuendigen.js';

/**
 * Returns as the API shows them (docs/msv3.md "Returns", "Return announcements"). Request item `n`
 * (0-based) is MSV3 position `PosRefID = n + 1`; answers carry that number as `position`, because the
 * wholesaler may reorder positions and split them into portions.
 */

/** The return reason → `RetoureGrund` (docs/msv3.md "Returns"). */
export const RETURN_REASONS = {
  order_error: 'Bestellfehler',
  not_delivered: 'BerechnetNichtGeliefert',
  damaged: 'Beschaedigt',
  expiry_too_short: 'VerfallZuKurz',
  over_delivered: 'ZuvielGeliefert',
} as const satisfies Record<string, RetoureGrund>;

export type ReturnReason = keyof typeof RETURN_REASONS;

const REASON_OF = Object.fromEntries(
  Object.entries(RETURN_REASONS).map(([json, wire]) => [wire, json as ReturnReason]),
) as Record<RetoureGrund, ReturnReason>;

/** `RetourenAnteilTyp` → `verdict`, with whether the wholesaler takes the goods back. */
export const RETURN_VERDICTS: Record<RetourenAnteilTyp, { verdict: string; accepted: boolean }> = {
  RetoureAkzeptiert: { verdict: 'accepted', accepted: true },
  RetoureAkzeptiertRueckspracheNoetig: { verdict: 'accepted_consultation_required', accepted: true },
  RetoureAkzeptiertKeineRuecksendungNoetig: { verdict: 'accepted_no_shipment_needed', accepted: true },
  LieferscheinnummerUnbekannt: { verdict: 'delivery_note_unknown', accepted: false },
  PznInLieferscheinnummerNichtEnthalten: { verdict: 'pzn_not_on_delivery_note', accepted: false },
  KeineRuecknahme: { verdict: 'not_taken_back', accepted: false },
  RueckgabefristUeberschritten: { verdict: 'return_period_exceeded', accepted: false },
  MengeUeberschritten: { verdict: 'quantity_exceeds_delivery', accepted: false },
};

/** One item of `POST /v1/returns` and `POST /v1/returns/announce`. */
export interface ReturnItemInput {
  tracking_number: string;
  pzn: string;
  quantity: number;
  reason: ReturnReason;
  batch?: string;
  expiry_date?: string;
}

interface ReturnItemJson {
  /** MSV3 `PosRefID`: the request item's index + 1. */
  position: number;
  tracking_number: string;
  pzn: string;
  quantity: number;
  reason: ReturnReason;
  batch: string | null;
  expiry_date: string | null;
}

export interface AssessedReturnItemJson extends ReturnItemJson {
  verdict: string;
  accepted: boolean;
}

export interface ReturnPortionJson {
  verdict: string;
  accepted: boolean;
  /** `GHReferenzID`: the wholesaler's reference, printed as DataMatrix; set once anything is accepted. */
  reference: string | null;
  /** `DokumentID`: the return slip to print (`GET /v1/documents/{id}`); null: print your own. */
  document_id: string | null;
  pickup_at: string | null;
  pickup_at_offset: string | null;
  tour: string | null;
  items: ReturnItemJson[];
}

export function toReturnPositions(items: readonly ReturnItemInput[]): ReturnPosition[] {
  return items.map((item, index) => ({
    positionRef: index + 1,
    deliveryNoteNumber: item.tracking_number,
    pzn: normalisePzn(item.pzn),
    quantity: item.quantity,
    reason: RETURN_REASONS[item.reason],
    batch: item.batch,
    expiryDate: item.expiry_date,
  }));
}

function toReturnItem(position: ReturnPosition): ReturnItemJson {
  return {
    position: position.positionRef,
    tracking_number: position.deliveryNoteNumber,
    pzn: position.pzn,
    quantity: position.quantity,
    reason: REASON_OF[position.reason],
    batch: position.batch ?? null,
    expiry_date: position.expiryDate ?? null,
  };
}

export function toAssessedReturnItem(position: AssessedReturnPosition): AssessedReturnItemJson {
  return { ...toReturnItem(position), ...RETURN_VERDICTS[position.verdict] };
}

export function toReturnPortion(portion: ReturnPortion): ReturnPortionJson {
  const pickup = portion.pickupTime === undefined ? undefined : toLocalDateTime(portion.pickupTime);
  return {
    ...RETURN_VERDICTS[portion.verdict],
    reference: portion.wholesalerReference ?? null,
    document_id: portion.documentId?.toLowerCase() ?? null,
    pickup_at: pickup?.local ?? null,
    pickup_at_offset: pickup?.offset ?? null,
    tour: portion.tour ?? null,
    items: sortedByPosition(portion.positions).map(toReturnItem),
  };
}

export function sortedByPosition<T extends { positionRef: number }>(positions: readonly T[]): T[] {
  return [...positions].sort((a, b) => a.positionRef - b.positionRef);
}
