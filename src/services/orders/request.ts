import { ApiError } from '../../core/errors.js';
import { type Liefervorgabe, maxQuantity, normalisePzn, type Pzn } from '../../msv3/model.js';
import type { OrderRequest } from '../../msv3/operations/bestellen.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { subOrderIdFor, supportIdFor } from './ids.js';

/**
 * From the JSON order to the one MSV3 sub-order (docs/msv3.md "Orders"):
 * - `Auftragsart` NORMAL (always agreed; JSON has no order type), `Auftragskennung` `K1`;
 * - `delivery_preference` → `Liefervorgabe`: normal → Normal, grouped → MaxVerbund (network warehouse,
 *   our reading of "grouped"), backorder → MaxNachlieferung, disposition → MaxDispo; default normal;
 * - a PZN may occur once per sub-order: lines repeating a PZN (`123` and `00000123` alike) with the same
 *   preference are merged into one position with the summed quantity (the result lists it once, with
 *   `merged_from`); with different preferences the request is refused (400), since one position has one
 *   Liefervorgabe;
 * - quantities within the version's range (v1 1..9,999, v2 1..99,999), merged sums included.
 */

export type DeliveryPreference = 'normal' | 'grouped' | 'backorder' | 'disposition';

export const DELIVERY_PREFERENCES = ['normal', 'backorder', 'grouped', 'disposition'] as const;

const LIEFERVORGABE: Record<DeliveryPreference, Liefervorgabe> = {
  normal: 'Normal',
  grouped: 'MaxVerbund',
  backorder: 'MaxNachlieferung',
  disposition: 'MaxDispo',
};

const ORDER_LABEL = 'K1';
/** MSV3 allows 1000 positions; wholesaler software documents 500 (docs/msv3.md "Orders"), so we cap there. */
export const MAX_ORDER_ITEMS = 500;

export interface OrderItemInput {
  pzn: string;
  quantity: number;
  delivery_preference?: DeliveryPreference;
}

/** One position of the sub-order. */
export interface OrderLine {
  pzn: Pzn;
  quantity: number;
  preference: DeliveryPreference;
  /** Indexes of the request items merged into this line (one, unless the PZN repeated). */
  from: number[];
}

/** What is stored before sending, so a resend after a crash is identical. */
export interface StoredOrderRequest {
  supportId: number;
  subOrder: { id: string; orderLabel: string; supportId: number };
  lines: OrderLine[];
}

export function orderLines(items: readonly OrderItemInput[], wholesaler: ResolvedWholesaler): OrderLine[] {
  const max = maxQuantity(wholesaler.version);
  const lines: OrderLine[] = [];
  const byPzn = new Map<Pzn, OrderLine>();
  items.forEach((item, index) => {
    const pzn = normalisePzn(item.pzn);
    const preference = item.delivery_preference ?? 'normal';
    const earlier = byPzn.get(pzn);
    if (earlier === undefined) {
      const line = { pzn, quantity: item.quantity, preference, from: [index] };
      byPzn.set(pzn, line);
      lines.push(line);
    } else if (earlier.preference !== preference) {
      throw refusal(
        wholesaler,
        `items[${index}].delivery_preference`,
        `items[${index}] repeats PZN ${pzn} of items[${earlier.from[0]}] with delivery_preference ` +
          `${preference} instead of ${earlier.preference}; MSV3 takes a PZN once per order, so send one line ` +
          'per PZN (lines with the same preference are merged).',
      );
    } else {
      earlier.quantity += item.quantity;
      earlier.from.push(index);
    }
    const line = byPzn.get(pzn)!;
    if (line.quantity > max) {
      const merged =
        line.from.length > 1
          ? ` (merged with ${line.from
              .slice(0, -1)
              .map((i) => `items[${i}]`)
              .join(', ')}: ${line.quantity})`
          : '';
      throw refusal(
        wholesaler,
        `items[${index}].quantity`,
        `items[${index}].quantity must be at most ${max}${merged}: ${wholesaler.id} speaks MSV3 version ${wholesaler.version}.`,
      );
    }
  });
  return lines;
}

function refusal(wholesaler: ResolvedWholesaler, param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, wholesaler: wholesaler.id });
}

export function storedOrderRequest(bestellungId: string, lines: OrderLine[]): StoredOrderRequest {
  const subOrderId = subOrderIdFor(bestellungId);
  return {
    supportId: supportIdFor(bestellungId),
    subOrder: { id: subOrderId, orderLabel: ORDER_LABEL, supportId: supportIdFor(subOrderId) },
    lines,
  };
}

/** The `bestellen` request of a stored order: the same bytes on every attempt. */
export function toMsv3OrderRequest(
  bestellungId: string,
  stored: StoredOrderRequest,
  clientSoftwareId: string,
): OrderRequest {
  return {
    clientSoftwareId,
    id: bestellungId,
    supportId: stored.supportId,
    subOrders: [
      {
        id: stored.subOrder.id,
        orderType: 'NORMAL',
        orderLabel: stored.subOrder.orderLabel,
        supportId: stored.subOrder.supportId,
        positions: stored.lines.map((line) => ({
          pzn: line.pzn,
          quantity: line.quantity,
          deliveryInstruction: LIEFERVORGABE[line.preference],
        })),
      },
    ],
  };
}
