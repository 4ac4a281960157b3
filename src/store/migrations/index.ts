import type { Migration } from 'kysely';
import * as accountsAndKeys from './001_accounts_and_keys.js';
import * as customWholesalers from './002_custom_wholesalers.js';
import * as webhooks from './003_webhooks.js';
import * as ordersAndIdempotency from './004_orders_and_idempotency.js';
import * as deliveryNotices from './005_delivery_notices.js';
import * as webhookLeases from './006_webhook_leases.js';
import * as webhookEventsFeed from './007_webhook_events_feed.js';
import * as sandboxTenants from './008_sandbox_tenants.js';
import * as rateLimits from './009_rate_limits.js';
import * as orderRecords from './010_order_records.js';
import * as orderSplits from './011_order_splits.js';
import * as sandboxRecords from './012_sandbox_records.js';

/**
 * Every migration, in order. Listed in code (not read from a folder) so they run the same from
 * `dist/` and under tsx. To add one: create `NNN_what.ts` exporting `up` (and `down`), import it
 * here and append it; never rename or edit one that has shipped. Use `dialectOf(db)` from
 * `../dialect.js` when SQLite and PostgreSQL need different SQL.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '001_accounts_and_keys': accountsAndKeys,
  '002_custom_wholesalers': customWholesalers,
  '003_webhooks': webhooks,
  '004_orders_and_idempotency': ordersAndIdempotency,
  '005_delivery_notices': deliveryNotices,
  '006_webhook_leases': webhookLeases,
  '007_webhook_events_feed': webhookEventsFeed,
  '008_sandbox_tenants': sandboxTenants,
  '009_rate_limits': rateLimits,
  '010_order_records': orderRecords,
  '011_order_splits': orderSplits,
  '012_sandbox_records': sandboxRecords,
};
