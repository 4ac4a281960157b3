import { toLocalDateTime } from '../../lib/local-date-time.js';
import type {
  DeliveredPortion,
  DeliveryNotice,
  DeliveryNoticeLine,
  Shortage,
} from '../../msv3/operations/lieferavis.js';
import type { StoredNotice } from '../../store/delivery-notices.js';
import { ORDER_TYPE_OF, type OrderType } from '../order-types.js';

/**
 * Delivery notices as the API shows them (docs/msv3.md "Delivery notices", plus additive MSV3 detail).
 *
 * `items` has one entry per PZN, in the order the PZN first appears on the note, with the quantities
 * of all its lines summed: the documented item is a PZN with a delivered quantity and a
 * shortage, and MSV3 may print one PZN on several lines (one per batch, for instance). The lines
 * themselves, with batches, expiry dates, parcels and sub-order ids, are in the additive `lines`.
 */

interface DeliveryItemJson {
  pzn: string;
  quantity_delivered: number;
  shortages: number;
  /** Additive: the first `Artikelbezeichnung` printed for this PZN, or null. */
  article_name: string | null;
}

interface DeliveredPartJson {
  quantity: number;
  batch: string | null;
  expiry_date: string | null;
  parcel_number: string | null;
  /** MSV3 `AuftragsID`: the uuid of the sub-order this part belongs to, when unambiguous. */
  sub_order_id: string | null;
}

interface ShortagePartJson {
  quantity: number;
  sub_order_id: string | null;
}

interface DeliveryLineJson {
  /** 1-based position on the printed note. */
  line: number;
  pzn: string;
  article_name: string | null;
  container_id: string | null;
  quantity_delivered: number;
  shortages: number;
  delivered: DeliveredPartJson[];
  shortage_parts: ShortagePartJson[];
}

export interface DeliveryNoticeJson {
  tracking_number: string;
  barcode: string;
  order_type: OrderType;
  date: string;
  has_shortages: boolean;
  items: DeliveryItemJson[];
  // Additive MSV3 detail.
  order_label: string;
  estimated_at: string | null;
  estimated_at_offset: string | null;
  tour: string | null;
  document_id: string | null;
  lines: DeliveryLineJson[];
}

/** A stored or looked-up notice, with what this gateway knows about it. */
export interface DeliveryHistoryEntryJson extends DeliveryNoticeJson {
  first_seen_at: string;
  last_seen_at: string;
  confirmed_at: string | null;
}

const sum = (values: readonly { quantity: number }[]) => values.reduce((total, v) => total + v.quantity, 0);

function toDeliveredPart(part: DeliveredPortion): DeliveredPartJson {
  return {
    quantity: part.quantity,
    batch: part.batch ?? null,
    expiry_date: part.expiryDate ?? null,
    parcel_number: part.parcelNumber ?? null,
    sub_order_id: part.orderId ?? null,
  };
}

function toShortagePart(shortage: Shortage): ShortagePartJson {
  return { quantity: shortage.quantity, sub_order_id: shortage.orderId ?? null };
}

function toLine(line: DeliveryNoticeLine, index: number): DeliveryLineJson {
  return {
    line: index + 1,
    pzn: line.pzn,
    article_name: line.articleName ?? null,
    container_id: line.containerId ?? null,
    quantity_delivered: sum(line.delivered),
    shortages: sum(line.shortages),
    delivered: line.delivered.map(toDeliveredPart),
    shortage_parts: line.shortages.map(toShortagePart),
  };
}

function toItems(lines: readonly DeliveryLineJson[]): DeliveryItemJson[] {
  const byPzn = new Map<string, DeliveryItemJson>();
  for (const line of lines) {
    const item = byPzn.get(line.pzn);
    if (item === undefined) {
      byPzn.set(line.pzn, {
        pzn: line.pzn,
        quantity_delivered: line.quantity_delivered,
        shortages: line.shortages,
        article_name: line.article_name,
      });
      continue;
    }
    item.quantity_delivered += line.quantity_delivered;
    item.shortages += line.shortages;
    item.article_name ??= line.article_name;
  }
  return [...byPzn.values()];
}

/**
 * `FehlmengenEnthalten` is redundant to the lines (docs/msv3.md "Delivery notices") and exists so the user is
 * told; a shortage in any line counts even if a wholesaler forgot the flag.
 */
export function hasShortages(notice: DeliveryNotice): boolean {
  return notice.hasShortages || notice.lines.some((line) => line.shortages.length > 0);
}

export function toDeliveryNoticeJson(notice: DeliveryNotice): DeliveryNoticeJson {
  const lines = notice.lines.map(toLine);
  const arrival = notice.deliveryTime === undefined ? undefined : toLocalDateTime(notice.deliveryTime);
  return {
    tracking_number: notice.deliveryNoteNumber,
    barcode: notice.barcodeReference,
    order_type: ORDER_TYPE_OF[notice.orderType],
    date: notice.documentDate.slice(0, 10),
    has_shortages: hasShortages(notice),
    items: toItems(lines),
    order_label: notice.orderLabel,
    estimated_at: arrival?.local ?? null,
    estimated_at_offset: arrival?.offset ?? null,
    tour: notice.tour ?? null,
    document_id: notice.documentId?.toLowerCase() ?? null,
    lines,
  };
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

export function toDeliveryHistoryEntryJson(stored: StoredNotice): DeliveryHistoryEntryJson {
  return {
    ...toDeliveryNoticeJson(stored.notice),
    first_seen_at: iso(stored.firstSeenAt),
    last_seen_at: iso(stored.lastSeenAt),
    confirmed_at: stored.confirmedAt === null ? null : iso(stored.confirmedAt),
  };
}
