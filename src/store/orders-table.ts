import type { KeyMode } from '../core/key-mode.js';

/**
 * Where a placed order stands (see `services/orders/placement.ts`):
 * `sending` – stored before `bestellen` goes out; `confirmed` / `queued_night_mode` / `rejected` – the
 * wholesaler's answer; `unknown` – sent, but the answer was lost and reconciliation has not settled it;
 * `not_placed` – the call failed before the wholesaler could act (safe to send again with the same Id).
 */
const ORDER_STATES = [
  'sending',
  'confirmed',
  'queued_night_mode',
  'rejected',
  'unknown',
  'not_placed',
] as const;
export type OrderState = (typeof ORDER_STATES)[number];

/** Row type of `orders` (migration 004): the mapping from a gateway order id to the MSV3 order. */
export interface OrdersTable {
  /** `GW-<token>`, derived from `bestellung_id`. */
  id: string;
  account_id: string;
  mode: KeyMode;
  /** The wholesaler id as requested (`_test` suffix included). */
  wholesaler: string;
  /** MSV3 customer id (the Basic-auth user name; never the password). */
  customer_id: string;
  /** `bestellung/@Id`: bestellstatusAbfragen asks by it; a resend reuses it. */
  bestellung_id: string;
  state: OrderState;
  /** JSON `StoredOrderRequest`: exactly what was (or will be) sent, so a resend is identical. */
  request: string;
  /** JSON `SubOrderAnswer[]` from bestellen or bestellstatusAbfragen, once known. */
  answer: string | null;
  /** The last status query's result: `available`, `expired`, `unknown`. */
  last_status: string | null;
  /** What clients see of the placement (`placement_status`), kept for the listing's filter (migration 010). */
  placement_status: string | null;
  /** When every line was delivered or reported short (migration 010). */
  fulfilled_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Row type of `order_lines` (migration 010): one ordered position with what became of it. */
export interface OrderLinesTable {
  order_id: string;
  /** `BestellungAuftrag/@Id`; a delivery notice's `AuftragsID` names it. */
  sub_order_id: string;
  pzn: string;
  sub_order_index: number;
  line_index: number;
  /** `Auftragsart`. */
  order_type: string;
  /** The `Auftragskennung` sent. */
  order_label: string;
  quantity_ordered: number;
  /** Null until the wholesaler answered. */
  quantity_confirmed: number | null;
  /** The `Auftragskennung` the wholesaler returned (it may replace ours); notices print it. */
  returned_label: string | null;
  /** The PZN delivered instead, when the answer substitutes the article (not a mere proposal). */
  substitute_pzn: string | null;
  quantity_delivered: number;
  quantity_short: number;
}

/** Row type of `order_fills` (migration 010): a delivery-note part credited to an order line. */
export interface OrderFillsTable {
  order_id: string;
  sub_order_id: string;
  pzn: string;
  /** `Lieferscheinnummer`. */
  tracking_number: string;
  /** 1-based line of the note, and the part within it (delivered parts and shortages counted apart). */
  note_line: number;
  part: number;
  kind: 'delivered' | 'short';
  quantity: number;
  /** The PZN on the note (a substitute may arrive instead of the ordered one). */
  delivered_pzn: string;
  batch: string | null;
  expiry_date: string | null;
  parcel_number: string | null;
  document_date: string;
  /** 1 when matched by label, tour and date because the note gave no `AuftragsID`. */
  inferred: number;
  recorded_at: number;
}

/** Row type of `order_history` (migration 010): each change of placement status or MSV3 status. */
export interface OrderHistoryTable {
  id: string;
  order_id: string;
  at: number;
  placement_status: string;
  status: string | null;
}
