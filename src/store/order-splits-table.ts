import type { KeyMode } from '../core/key-mode.js';

/** Row type of `order_splits` (migration 011): the stored plan of one split order. */
export interface OrderSplitsTable {
  /** `SP-<token>`, derived from the account, API key, mode, Idempotency-Key and the key's first use. */
  id: string;
  account_id: string;
  mode: KeyMode;
  /** JSON plan owned by `services/orders/split.ts`: lines, allocations, each wholesaler order's ids. */
  plan: string;
  created_at: number;
}
