import { ApiError } from '../../core/errors.js';
import {
  type Auftragsart,
  type Liefervorgabe,
  maxQuantity,
  normalisePzn,
  type Pzn,
} from '../../msv3/model.js';
import type { OrderRequest } from '../../msv3/operations/bestellen.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { AUFTRAGSART_OF, ORDER_TYPE_OF, type OrderType } from '../order-types.js';
import { invalidPzn } from '../pzn-check.js';
import { subOrderIdFor, supportIdFor } from './ids.js';

/**
 * From the JSON order to the MSV3 `Bestellung` (docs/orders.md, docs/msv3.md "Orders"):
 * - `items` is one sub-order (`order_type`, `order_label`, `container_id` beside it); `sub_orders` is a
 *   list of them, each with its own type, label, container and items: exactly one of the two;
 * - `order_type` → `Auftragsart` (normal NORMAL, batch STAPEL, special SONDER, shipping VERSAND); a
 *   shipping sub-order needs a `container_id` (`GebindeId`), any other refuses one;
 * - `order_label` → `Auftragskennung`; without one the type's default label (`K1` for normal orders, the
 *   type's MSV3 name for the others), which does not count as a free label of the contract;
 * - `delivery_preference` → `Liefervorgabe`: normal → Normal, grouped → MaxVerbund (network warehouse,
 *   our reading of "grouped"), backorder → MaxNachlieferung, disposition → MaxDispo; default normal;
 * - a PZN may occur once per sub-order: lines of one sub-order repeating a PZN (`123` and `00000123`
 *   alike) with the same preference are merged into one position with the summed quantity (the result
 *   lists it once, with `merged_from`); with different preferences the request is refused (400), since
 *   one position has one Liefervorgabe. Across sub-orders a PZN may repeat;
 * - a PZN whose check digit is wrong is refused, naming the item (docs/glossary.md "PZN");
 * - quantities within the version's range (v1 1..9,999, v2 1..99,999), merged sums included;
 * - positions across all sub-orders at most `maxPositions` (ORDER_MAX_POSITIONS, never above MSV3's 1,000).
 * Every refusal is 400 `invalid_request` whose `param` names the sub-order and field.
 */

export type DeliveryPreference = 'normal' | 'grouped' | 'backorder' | 'disposition';

export const DELIVERY_PREFERENCES = ['normal', 'backorder', 'grouped', 'disposition'] as const;

const LIEFERVORGABE: Record<DeliveryPreference, Liefervorgabe> = {
  normal: 'Normal',
  grouped: 'MaxVerbund',
  backorder: 'MaxNachlieferung',
  disposition: 'MaxDispo',
};

/** `Auftragskennung` of a sub-order the client gave no label. */
const DEFAULT_ORDER_LABEL: Record<OrderType, string> = {
  normal: 'K1',
  batch: 'STAPEL',
  special: 'SONDER',
  shipping: 'VERSAND',
};

export interface OrderItemInput {
  pzn: string;
  quantity: number;
  delivery_preference?: DeliveryPreference;
}

interface SubOrderInput {
  order_type?: OrderType;
  order_label?: string;
  container_id?: string;
  items: OrderItemInput[];
}

/** The order part of `POST /v1/orders` (and of a split order's wholesaler share). */
export interface OrderInput extends Partial<Omit<SubOrderInput, 'items'>> {
  items?: OrderItemInput[];
  sub_orders?: SubOrderInput[];
}

/** One position of a sub-order. */
export interface OrderLine {
  pzn: Pzn;
  quantity: number;
  preference: DeliveryPreference;
  /** Indexes of the sub-order's request items merged into this line (one, unless the PZN repeated). */
  from: number[];
}

/** A sub-order as validated, before it gets its ids. */
export interface PlannedSubOrder {
  type: OrderType;
  label: string;
  /** The client chose a label other than the default: it counts against the contract's free labels. */
  labelChosen: boolean;
  containerId?: string;
  lines: OrderLine[];
  /** Where the sub-order is in the request, for `param`: `sub_orders[1]`, or '' for the `items` form. */
  at: string;
}

/** A sub-order as stored before sending, so a resend after a crash is identical. */
export interface StoredSubOrder {
  id: string;
  orderType: Auftragsart;
  orderLabel: string;
  containerId?: string;
  supportId: number;
  lines: OrderLine[];
}

export interface StoredOrderRequest {
  supportId: number;
  subOrders: StoredSubOrder[];
}

/** `param` of a field of the sub-order at `at` (`sub_orders[1].items[0].pzn`, or `items[0].pzn`). */
export function paramAt(at: string, field: string): string {
  return at === '' ? field : `${at}.${field}`;
}

/** Validates the order's sub-orders (see the module comment); throws 400 `invalid_request`. */
export function plannedSubOrders(
  input: OrderInput,
  wholesaler: ResolvedWholesaler,
  maxPositions: number,
): PlannedSubOrder[] {
  const inputs = subOrderInputs(input, wholesaler);
  const planned = inputs.map(({ sub, at }) => plannedSubOrder(sub, at, wholesaler));
  const positions = planned.reduce((sum, sub) => sum + sub.lines.length, 0);
  if (positions > maxPositions) {
    throw refusal(
      wholesaler,
      input.sub_orders === undefined ? 'items' : 'sub_orders',
      `This order has ${positions} positions across its sub-orders (after merging repeated PZNs); at most ${maxPositions} fit in one order (ORDER_MAX_POSITIONS). Split it into several orders.`,
    );
  }
  return planned;
}

function subOrderInputs(
  input: OrderInput,
  wholesaler: ResolvedWholesaler,
): { sub: SubOrderInput; at: string }[] {
  if (input.sub_orders !== undefined) {
    if (input.items !== undefined) {
      throw refusal(
        wholesaler,
        'items',
        'Send either `items` (one sub-order) or `sub_orders`, not both: with `sub_orders`, each sub-order carries its own items.',
      );
    }
    for (const field of ['order_type', 'order_label', 'container_id'] as const) {
      if (input[field] !== undefined) {
        throw refusal(
          wholesaler,
          field,
          `\`${field}\` belongs to each sub-order when \`sub_orders\` is used; move it into the sub-orders it concerns.`,
        );
      }
    }
    return input.sub_orders.map((sub, i) => ({ sub, at: `sub_orders[${i}]` }));
  }
  if (input.items === undefined) {
    throw refusal(wholesaler, 'items', 'An order needs `items` (one sub-order) or `sub_orders`.');
  }
  const { sub_orders: _none, ...single } = input;
  return [{ sub: { ...single, items: input.items }, at: '' }];
}

function plannedSubOrder(sub: SubOrderInput, at: string, wholesaler: ResolvedWholesaler): PlannedSubOrder {
  const type = sub.order_type ?? 'normal';
  if (type === 'shipping' && sub.container_id === undefined) {
    throw refusal(
      wholesaler,
      paramAt(at, 'container_id'),
      `A shipping ${at === '' ? 'order' : 'sub-order'} needs a \`container_id\` (MSV3 GebindeId, the container it travels in).`,
    );
  }
  if (type !== 'shipping' && sub.container_id !== undefined) {
    throw refusal(
      wholesaler,
      paramAt(at, 'container_id'),
      `\`container_id\` (MSV3 GebindeId) is for shipping orders only; this ${at === '' ? 'order' : 'sub-order'} is ${type}.`,
    );
  }
  return {
    type,
    label: sub.order_label ?? DEFAULT_ORDER_LABEL[type],
    labelChosen: sub.order_label !== undefined && sub.order_label !== DEFAULT_ORDER_LABEL[type],
    ...(sub.container_id === undefined ? {} : { containerId: sub.container_id }),
    lines: orderLines(sub.items, wholesaler, at),
    at,
  };
}

/** The positions of one sub-order: PZNs normalised, repeats merged, quantities within the version. */
export function orderLines(
  items: readonly OrderItemInput[],
  wholesaler: ResolvedWholesaler,
  at = '',
): OrderLine[] {
  const max = maxQuantity(wholesaler.version);
  const lines: OrderLine[] = [];
  const byPzn = new Map<Pzn, OrderLine>();
  const item = (index: number) => paramAt(at, `items[${index}]`);
  items.forEach((input, index) => {
    const pzn = normalisePzn(input.pzn);
    const problem = invalidPzn(pzn);
    if (problem !== null) {
      throw refusal(
        wholesaler,
        `${item(index)}.pzn`,
        `\`${item(index)}.pzn\` ${problem.message} Nothing was sent to the wholesaler.`,
      );
    }
    const preference = input.delivery_preference ?? 'normal';
    const earlier = byPzn.get(pzn);
    if (earlier === undefined) {
      const line = { pzn, quantity: input.quantity, preference, from: [index] };
      byPzn.set(pzn, line);
      lines.push(line);
    } else if (earlier.preference !== preference) {
      throw refusal(
        wholesaler,
        `${item(index)}.delivery_preference`,
        `${item(index)} repeats PZN ${pzn} of ${item(earlier.from[0]!)} with delivery_preference ` +
          `${preference} instead of ${earlier.preference}; MSV3 takes a PZN once per sub-order, so send one ` +
          'line per PZN (lines with the same preference are merged).',
      );
    } else {
      earlier.quantity += input.quantity;
      earlier.from.push(index);
    }
    const line = byPzn.get(pzn)!;
    if (line.quantity > max) {
      const merged =
        line.from.length > 1
          ? ` (merged with ${line.from
              .slice(0, -1)
              .map((i) => item(i))
              .join(', ')}: ${line.quantity})`
          : '';
      throw refusal(
        wholesaler,
        `${item(index)}.quantity`,
        `${item(index)}.quantity must be at most ${max}${merged}: ${wholesaler.id} speaks MSV3 version ${wholesaler.version}.`,
      );
    }
  });
  return lines;
}

function refusal(wholesaler: ResolvedWholesaler, param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, wholesaler: wholesaler.id });
}

/** The stored request: every id derived from the Bestellung Id, so a resend is identical. */
export function storedOrderRequest(
  bestellungId: string,
  planned: readonly PlannedSubOrder[],
): StoredOrderRequest {
  return {
    supportId: supportIdFor(bestellungId),
    subOrders: planned.map((sub, index) => {
      const id = subOrderIdFor(bestellungId, index);
      return {
        id,
        orderType: AUFTRAGSART_OF[sub.type],
        orderLabel: sub.label,
        ...(sub.containerId === undefined ? {} : { containerId: sub.containerId }),
        supportId: supportIdFor(id),
        lines: sub.lines,
      };
    }),
  };
}

/**
 * A stored request as JSON, read back. Orders stored before sub-orders existed hold one NORMAL sub-order
 * as `subOrder` beside `lines`; they read as that sub-order, with the same ids and bytes.
 */
export function storedRequestOf(json: unknown): StoredOrderRequest {
  const stored = json as StoredOrderRequest & {
    subOrder?: { id: string; orderLabel: string; supportId: number };
    lines?: OrderLine[];
  };
  if (stored.subOrders !== undefined) return stored;
  const { subOrder, lines } = stored;
  return {
    supportId: stored.supportId,
    subOrders: [{ ...subOrder!, orderType: 'NORMAL', lines: lines! }],
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
    subOrders: stored.subOrders.map((sub) => ({
      id: sub.id,
      orderType: sub.orderType,
      orderLabel: sub.orderLabel,
      ...(sub.containerId === undefined ? {} : { containerId: sub.containerId }),
      supportId: sub.supportId,
      positions: sub.lines.map((line) => ({
        pzn: line.pzn,
        quantity: line.quantity,
        deliveryInstruction: LIEFERVORGABE[line.preference],
      })),
    })),
  };
}

/** The API's name of a stored sub-order's type. */
export function orderTypeOf(sub: Pick<StoredSubOrder, 'orderType'>): OrderType {
  return ORDER_TYPE_OF[sub.orderType];
}
