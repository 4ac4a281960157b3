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
  created_at: number;
  updated_at: number;
}
