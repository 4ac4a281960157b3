import type { KeyMode } from '../core/key-mode.js';
import type { DeliveryNoticesTable } from './delivery-notices-table.js';
import type { IdempotencyKeysTable } from './idempotency-table.js';
import type { OrderSplitsTable } from './order-splits-table.js';
import type { OrderFillsTable, OrderHistoryTable, OrderLinesTable, OrdersTable } from './orders-table.js';
import type { SandboxRecordsTable, SandboxTenantsTable } from './sandbox-tenants-table.js';
import type {
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEventsTable,
  WebhookSubscriptionsTable,
} from './webhook-tables.js';

/**
 * Row types of every table, as Kysely sees them. Conventions: snake_case columns, text ids with a
 * type prefix (`acct_…`), times as epoch-ms integers (bigint on PostgreSQL, parsed to number),
 * booleans as integers 0/1 (SQLite has no boolean). Repositories turn rows into domain objects.
 */
export interface Tables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  custom_wholesalers: CustomWholesalersTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  delivery_notices: DeliveryNoticesTable;
  idempotency_keys: IdempotencyKeysTable;
  orders: OrdersTable;
  order_lines: OrderLinesTable;
  order_fills: OrderFillsTable;
  order_history: OrderHistoryTable;
  order_splits: OrderSplitsTable;
  sandbox_tenants: SandboxTenantsTable;
  sandbox_records: SandboxRecordsTable;
}

export interface AccountsTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  mode: KeyMode;
  /** SHA-256 hex of the whole key; the key itself is never stored. */
  hash: string;
  /** `pk_test_` plus the first four random characters, for display. */
  prefix: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface CustomWholesalersTable {
  /** Readable and stable: a slug of the name plus a hash of account, mode and endpoint. */
  id: string;
  account_id: string;
  mode: KeyMode;
  name: string;
  endpoint: string;
  version: 1 | 2;
  verified: number;
  /** JSON array of capability names. */
  capabilities: string;
  created_at: number;
  verified_at: number | null;
}
