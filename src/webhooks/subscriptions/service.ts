import type { Kysely } from 'kysely';
import type { Tenant } from '../../core/caller.js';
import { ApiError } from '../../core/errors.js';
import { EVENT_TYPES, EVERY, type EventSelector, isEventType } from '../../core/event-types.js';
import { type AddressPolicy, checkOutboundUrl, type HostLookup } from '../../lib/address-policy.js';
import type { Clock } from '../../lib/clock.js';
import { newWebhookId, randomToken } from '../../lib/ids.js';
import { isForeignKeyViolation } from '../../store/dialect.js';
import type { Tables } from '../../store/schema.js';
import { findDelivery } from '../../store/webhook-delivery-log.js';
import { claimDelivery, pauseDeliveries, resumeDeliveries } from '../../store/webhook-outbox.js';
import {
  countSubscriptions,
  findSubscription,
  insertSubscription,
  type SubscriptionChanges,
  updateSubscription,
  type WebhookSubscription,
} from '../../store/webhook-subscriptions.js';
import { type AttemptReport, attemptDelivery, type DeliverDeps } from '../delivery/deliver.js';
import { notifyWorkers, recordPing } from '../events/record.js';
import { generateSigningSecret } from './secrets.js';

const MAX_SUBSCRIPTIONS = 50;
/** After a rotation the previous secret keeps signing this long. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;
const DISABLED_BY_API = 'Disabled through the API.';

export interface SubscriptionDeps {
  db: Kysely<Tables>;
  clock: Clock;
  /** The gateway's outbound address policy (src/lib/address-policy.ts). */
  addressPolicy: AddressPolicy;
  lookup?: HostLookup;
  /**
   * Throws 404 `wholesaler_not_found` unless the caller can use this wholesaler id in its mode: the
   * registry's `resolve` (catalogue, `<id>_test` for test keys, the account's custom wholesalers).
   */
  resolveWholesaler: (tenant: Tenant, id: string) => Promise<unknown>;
  /** Wakes this process's delivery worker (`AppDeps.webhooks.wake`) when deliveries become due. */
  wake?: () => void;
}

export async function createSubscription(
  deps: SubscriptionDeps,
  tenant: Tenant,
  input: { url: string; wholesaler: string; events: string[] },
): Promise<WebhookSubscription> {
  const events = checkEvents(input.events);
  if (input.wholesaler !== EVERY) await deps.resolveWholesaler(tenant, input.wholesaler);
  const url = await checkUrl(deps, tenant, input.url);
  if ((await countSubscriptions(deps.db, tenant)) >= MAX_SUBSCRIPTIONS) {
    throw new ApiError(
      'conflict',
      `An account can have at most ${MAX_SUBSCRIPTIONS} webhook subscriptions per mode.`,
    );
  }
  const now = deps.clock.now();
  const subscription: WebhookSubscription = {
    id: newWebhookId(),
    accountId: tenant.accountId,
    mode: tenant.mode,
    url,
    wholesaler: input.wholesaler,
    events,
    secret: generateSigningSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    active: true,
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  };
  await insertSubscription(deps.db, subscription);
  return subscription;
}

export async function getSubscription(
  deps: Pick<SubscriptionDeps, 'db'>,
  tenant: Tenant,
  id: string,
): Promise<WebhookSubscription> {
  const subscription = await findSubscription(deps.db, tenant, id);
  if (subscription === undefined) throw notFound(id);
  return subscription;
}

/**
 * PATCH: url and events are checked like at creation; `active: true` clears the failure record.
 * Re-enabling, or a new URL for an active subscription, makes its waiting deliveries due now (paused ones
 * pending again, backoffs dropped) and wakes the workers; `active: false` parks them.
 */
export async function changeSubscription(
  deps: Omit<SubscriptionDeps, 'resolveWholesaler'>,
  tenant: Tenant,
  id: string,
  input: { url?: string; events?: string[]; active?: boolean },
): Promise<WebhookSubscription> {
  const current = await getSubscription(deps, tenant, id);
  const now = deps.clock.now();
  const changes: SubscriptionChanges = { updatedAt: now };
  if (input.events !== undefined) changes.events = checkEvents(input.events);
  if (input.url !== undefined) changes.url = await checkUrl(deps, tenant, input.url);
  const enable = input.active === true && !current.active;
  const disable = input.active === false && current.active;
  if (enable)
    Object.assign(changes, { active: true, disabledReason: null, disabledAt: null, failingSince: null });
  if (disable) Object.assign(changes, { active: false, disabledReason: DISABLED_BY_API, disabledAt: now });
  const newUrl = changes.url !== undefined && changes.url !== current.url;
  const resume = enable || (newUrl && current.active && input.active !== false);
  let resumed = 0;
  const updated = await deps.db.transaction().execute(async (trx) => {
    if (resume) resumed = await resumeDeliveries(trx, id, now);
    if (disable) await pauseDeliveries(trx, id);
    if (resumed > 0) await notifyWorkers(trx);
    return updateSubscription(trx, tenant, id, changes);
  });
  if (resumed > 0) deps.wake?.();
  return updated ?? Promise.reject(notFound(id));
}

/**
 * A new secret, returned in full once; the current one becomes the previous one and keeps signing for
 * 24 hours. A second rotation within that time drops the older previous secret.
 */
export async function rotateSecret(
  deps: Pick<SubscriptionDeps, 'db' | 'clock'>,
  tenant: Tenant,
  id: string,
): Promise<WebhookSubscription> {
  const current = await getSubscription(deps, tenant, id);
  const now = deps.clock.now();
  const updated = await updateSubscription(deps.db, tenant, id, {
    secret: generateSigningSecret(),
    previousSecret: current.secret,
    previousSecretExpiresAt: now + ROTATION_OVERLAP_MS,
    updatedAt: now,
  });
  return updated ?? Promise.reject(notFound(id));
}

/** Sends a signed `ping` now (also to a disabled subscription) and reports the attempt. */
export async function sendTestEvent(
  deps: DeliverDeps & { leaseMs: number },
  tenant: Tenant,
  id: string,
): Promise<AttemptReport> {
  const subscription = await getSubscription(deps, tenant, id);
  const token = `test:${randomToken(12)}`;
  const now = deps.clock.now();
  // Deleted by another request since it was read: the same 404 as before it was read.
  const { event, deliveryIds } = await recordPing(deps.db, subscription, {
    now,
    token,
    leaseMs: deps.leaseMs,
  }).catch((error: unknown) => {
    throw isForeignKeyViolation(error) ? notFound(id) : error;
  });
  const report = await attemptDelivery(
    deps,
    {
      id: deliveryIds[0]!,
      eventId: event.id,
      eventType: event.type,
      eventCreatedAt: now,
      subscriptionId: subscription.id,
      accountId: subscription.accountId,
      mode: subscription.mode,
      status: 'pending',
      attempts: 1,
      payload: JSON.stringify(event),
      url: subscription.url,
      secret: subscription.secret,
      previousSecret: subscription.previousSecret,
      previousSecretExpiresAt: subscription.previousSecretExpiresAt,
      subscriptionFailingSince: subscription.failingSince,
      token,
    },
    'test',
  );
  return report!;
}

/** Attempts one delivery of this subscription now, whatever its state; 409 while it is in flight. */
export async function retryDelivery(
  deps: DeliverDeps & { leaseMs: number },
  tenant: Tenant,
  id: string,
  deliveryId: string,
): Promise<AttemptReport> {
  await getSubscription(deps, tenant, id);
  const delivery = await findDelivery(deps.db, tenant, id, deliveryId);
  if (delivery === undefined) {
    throw new ApiError('resource_not_found', `No delivery ${deliveryId} for webhook ${id}.`, {
      param: 'delivery_id',
    });
  }
  const job = await claimDelivery(deps.db, {
    id: deliveryId,
    token: `manual:${randomToken(12)}`,
    now: deps.clock.now(),
    leaseMs: deps.leaseMs,
  });
  if (job === undefined) {
    throw new ApiError(
      'conflict',
      'This delivery is being attempted right now; try again in a few seconds.',
      {
        retryAfter: 10,
      },
    );
  }
  return (await attemptDelivery(deps, job, 'manual'))!;
}

/** Known event types, without duplicates; `*` anywhere in the list stands for all of them. */
function checkEvents(events: string[]): EventSelector[] {
  events.forEach((event, index) => {
    if (event !== EVERY && !isEventType(event)) {
      throw new ApiError(
        'invalid_request',
        `\`events[${index}]\` is not an event type; use one of: ${EVENT_TYPES.join(', ')}, or \`*\` for all.`,
        { param: `events[${index}]` },
      );
    }
  });
  if (events.includes(EVERY)) return [EVERY];
  return [...new Set(events as EventSelector[])];
}

async function checkUrl(
  deps: Omit<SubscriptionDeps, 'resolveWholesaler'>,
  tenant: Tenant,
  url: string,
): Promise<string> {
  const check = await checkOutboundUrl(url, {
    live: tenant.mode === 'live',
    policy: deps.addressPolicy,
    lookup: deps.lookup,
  });
  if (!check.ok) {
    throw new ApiError(
      check.reason === 'invalid_url' ? 'invalid_request' : 'endpoint_not_allowed',
      check.message,
      {
        param: 'url',
      },
    );
  }
  return check.url.href;
}

function notFound(id: string): ApiError {
  return new ApiError('webhook_not_found', `No webhook subscription ${id.slice(0, 100)} for this API key.`, {
    param: 'id',
  });
}
