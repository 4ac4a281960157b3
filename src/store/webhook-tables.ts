import type { KeyMode } from '../core/key-mode.js';

/** Row types of the webhook tables (migration 003); conventions as in `schema.ts`. */
export interface WebhookSubscriptionsTable {
  id: string;
  account_id: string;
  mode: KeyMode;
  url: string;
  wholesaler: string;
  /** JSON array of event names. */
  events: string;
  /** `whsec_…`; kept in clear because every delivery is signed with it. */
  secret: string;
  /** The secret before the last rotation; still signs until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  active: number;
  disabled_reason: string | null;
  disabled_at: number | null;
  /** Start of the current run of failed attempts (null after a success). */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookEventsTable {
  id: string;
  account_id: string;
  mode: KeyMode;
  type: string;
  wholesaler: string;
  customer_id: string | null;
  /** The exact JSON body every attempt sends. */
  payload: string;
  created_at: number;
}

/** `paused`: waiting while its subscription is disabled; back to `pending` when it is re-enabled. */
export type DeliveryStatus = 'pending' | 'paused' | 'delivered' | 'failed';

/** One row per event × subscription: the outbox. */
export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  subscription_id: string;
  account_id: string;
  mode: KeyMode;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due (null once delivered or given up). */
  next_attempt_at: number | null;
  /** The claim token of the worker holding the lease. */
  locked_by: string | null;
  locked_until: number | null;
  delivered_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  subscription_id: string;
  attempt: number;
  /** `schedule` (the worker), `manual` (retry endpoint) or `test` (ping). */
  trigger: string;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  outcome: string;
  error: string | null;
}
