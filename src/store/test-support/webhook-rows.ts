import type { Selectable } from 'kysely';
import type { Tenant } from '../../core/caller.js';
import { newWebhookId, randomToken } from '../../lib/ids.js';
import type { WebhookSubscription } from '../webhook-subscriptions.js';
import type { WebhookDeliveriesTable } from '../webhook-tables.js';

/** An active subscription of `scope` to two delivery events, created and updated at `at`. */
export function sampleSubscription(
  scope: Tenant,
  at: number,
  overrides: Partial<WebhookSubscription> = {},
): WebhookSubscription {
  return {
    id: newWebhookId(),
    accountId: scope.accountId,
    mode: scope.mode,
    url: 'https://receiver.example.com/hooks',
    wholesaler: 'phoenix',
    events: ['delivery.received', 'delivery.shortage'],
    secret: `whsec_${randomToken(32)}`,
    previousSecret: null,
    previousSecretExpiresAt: null,
    active: true,
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/** A pending, unleased delivery of event `eventId` to `s`, due and created at `at`. */
export function sampleDeliveryRow(
  eventId: string,
  s: WebhookSubscription,
  at: number,
  overrides: Partial<Selectable<WebhookDeliveriesTable>> = {},
): Selectable<WebhookDeliveriesTable> {
  return {
    id: `whd_${randomToken(22)}`,
    event_id: eventId,
    subscription_id: s.id,
    account_id: s.accountId,
    mode: s.mode,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    locked_by: null,
    locked_until: null,
    delivered_at: null,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    created_at: at,
    ...overrides,
  };
}
