import type { Static } from 'typebox';
import type { AttemptRecord, DeliveryRecord } from '../store/webhook-delivery-log.js';
import type { WebhookSubscription } from '../store/webhook-subscriptions.js';
import type { AttemptReport } from '../webhooks/delivery/deliver.js';
import { maskSigningSecret } from '../webhooks/subscriptions/secrets.js';
import type {
  AttemptResultSchema,
  AttemptSchema,
  DeliverySchema,
  WebhookSchema,
} from './schemas/webhooks.js';

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** The subscription as the API shows it; the secret in full only when `revealSecret`. */
export function webhookJson(
  s: WebhookSubscription,
  now: number,
  options: { revealSecret?: boolean } = {},
): Static<typeof WebhookSchema> {
  const overlapping = s.previousSecretExpiresAt !== null && s.previousSecretExpiresAt > now;
  return {
    id: s.id,
    url: s.url,
    wholesaler: s.wholesaler,
    events: s.events,
    signing_secret: options.revealSecret ? s.secret : maskSigningSecret(s.secret),
    active: s.active,
    disabled_reason: s.disabledReason,
    livemode: s.mode === 'live',
    previous_secret_expires_at: overlapping ? isoOrNull(s.previousSecretExpiresAt) : null,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
  };
}

export function deliveryJson(d: DeliveryRecord): Static<typeof DeliverySchema> {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempt_count: d.attempts,
    next_attempt_at: isoOrNull(d.nextAttemptAt),
    delivered_at: isoOrNull(d.deliveredAt),
    last_attempt_at: isoOrNull(d.lastAttemptAt),
    last_status_code: d.lastStatus,
    last_error: d.lastError,
    created_at: iso(d.createdAt),
    attempts: d.attemptLog.map(attemptJson),
  };
}

function attemptJson(a: AttemptRecord): Static<typeof AttemptSchema> {
  const success = a.outcome === 'success';
  return {
    id: a.id,
    attempt: a.attempt,
    trigger: a.trigger as Static<typeof AttemptSchema>['trigger'],
    started_at: iso(a.startedAt),
    duration_ms: a.durationMs,
    success,
    status_code: a.statusCode,
    error_class: success ? null : (a.outcome as Static<typeof AttemptSchema>['error_class']),
    error: a.error,
  };
}

export function attemptResultJson(r: AttemptReport): Static<typeof AttemptResultSchema> {
  return {
    delivery_id: r.deliveryId,
    event_id: r.eventId,
    attempt: r.attempt,
    success: r.success,
    status_code: r.statusCode,
    duration_ms: r.durationMs,
    error_class: r.success ? null : r.outcome,
    error: r.error,
    next_attempt_at: isoOrNull(r.nextAttemptAt),
    subscription_disabled: r.subscriptionDisabled,
  };
}
