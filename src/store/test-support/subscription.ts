import { newWebhookId, randomToken } from '../../lib/ids.js';
import type { Scope, WebhookSubscription } from '../webhook-subscriptions.js';

/** An active subscription of `scope` to two delivery events, created and updated at `at`. */
export function sampleSubscription(
  scope: Scope,
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
