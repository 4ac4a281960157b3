import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { dialectOf } from '../../store/dialect.js';
import type { Tables } from '../../store/schema.js';
import {
  completeDelivered,
  completeDelivery,
  type DeliveryJob,
  type DeliveryUpdate,
  insertAttempts,
  lockLiveDeliveries,
  pauseDeliveries,
  pauseIfInactive,
} from '../../store/webhook-outbox.js';
import {
  disableSubscription,
  markSubscriptionFailing,
  markSubscriptionHealthy,
} from '../../store/webhook-subscriptions.js';
import { newAttemptId } from '../events/record.js';
import { deliveryHeaders } from '../sign.js';
import type { SendResult, WebhookHttpClient } from './http-client.js';
import type { WebhookMetrics } from './metrics.js';
import { DISABLE_AFTER_FAILING_MS, nextRetryDelayMs } from './schedule.js';

export type AttemptTrigger = 'schedule' | 'manual' | 'test';

export interface DeliverDeps {
  db: Kysely<Tables>;
  client: WebhookHttpClient;
  clock: Clock;
  userAgent: string;
  metrics?: WebhookMetrics;
  /** Jitter source; for tests. */
  random?: () => number;
}

export interface AttemptReport {
  deliveryId: string;
  eventId: string;
  attempt: number;
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  /** `success` or the failure class. */
  outcome: string;
  error: string | null;
  nextAttemptAt: number | null;
  subscriptionDisabled: boolean;
  /** The lease expired and another worker took the delivery over; its row was left alone. */
  leaseLost: boolean;
  /**
   * The delivery was deleted during the attempt (its subscription was deleted): nothing was recorded.
   */
  deleted: boolean;
}

export const DISABLED_GONE = 'The endpoint answered 410 Gone.';
export const DISABLED_FAILING = 'Every delivery attempt failed for 5 days.';

/** The secrets that sign now: the current one, and the previous one during its 24-hour overlap. */
function signingSecrets(
  subscription: { secret: string; previousSecret: string | null; previousSecretExpiresAt: number | null },
  now: number,
): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = subscription;
  return previousSecret !== null && previousSecretExpiresAt !== null && previousSecretExpiresAt > now
    ? [secret, previousSecret]
    : [secret];
}

/** An attempt that was made but not yet written down. */
export interface MadeAttempt {
  job: DeliveryJob;
  trigger: AttemptTrigger;
  startedAt: number;
  finishedAt: number;
  result: SendResult;
  update: DeliveryUpdate;
}

/**
 * Makes one attempt of a leased delivery and records it: the attempt log, the delivery's next state
 * (delivered, a retry per the schedule, or given up) and the subscription's health. Test pings never
 * change the subscription; a manual retry of a delivered or given-up delivery does not reschedule it.
 * Returns undefined when `signal` aborted the attempt (the caller releases the lease).
 */
export async function attemptDelivery(
  deps: DeliverDeps,
  job: DeliveryJob,
  trigger: AttemptTrigger,
  signal?: AbortSignal,
): Promise<AttemptReport | undefined> {
  const made = await makeAttempt(deps, job, trigger, signal);
  return made && (await recordAttempts(deps, [made]))[0];
}

/** Sends the signed request; undefined if `signal` aborted it. Writes nothing. */
export async function makeAttempt(
  deps: DeliverDeps,
  job: DeliveryJob,
  trigger: AttemptTrigger,
  signal?: AbortSignal,
): Promise<MadeAttempt | undefined> {
  const startedAt = deps.clock.now();
  if (trigger === 'schedule' && job.attempts === 1) {
    deps.metrics?.firstAttemptDelay.observe(Math.max(0, startedAt - job.eventCreatedAt) / 1000);
  }
  const headers = deliveryHeaders({
    eventId: job.eventId,
    eventType: job.eventType,
    deliveryId: job.id,
    attempt: job.attempts,
    body: job.payload,
    secrets: signingSecrets(job, startedAt),
    timestampSeconds: Math.floor(startedAt / 1000),
    userAgent: deps.userAgent,
  });
  const result = await deps.client.send(
    { url: job.url, headers, body: job.payload, live: job.mode === 'live' },
    signal,
  );
  if (signal?.aborted) return undefined;
  const finishedAt = deps.clock.now();
  return {
    job,
    trigger,
    startedAt,
    finishedAt,
    result,
    update: nextState(job, trigger, result, finishedAt, deps.random),
  };
}

/**
 * Writes attempts in one transaction (the worker batches the ones that finish together): the attempt
 * log, each delivery's next state while its lease is still held, and the subscriptions' health, in order.
 * An attempt whose delivery was deleted meanwhile (with its subscription) is reported `deleted` and
 * leaves no trace.
 */
export async function recordAttempts(
  deps: DeliverDeps,
  made: readonly MadeAttempt[],
): Promise<AttemptReport[]> {
  const reports = await deps.db.transaction().execute(async (trx) => {
    const live = await lockLiveDeliveries(
      trx,
      dialectOf(deps.db as Kysely<unknown>),
      made.map(({ job }) => ({ id: job.id, subscriptionId: job.subscriptionId })),
    );
    const kept = made.filter(({ job }) => live.has(job.id));
    await insertAttempts(
      trx,
      kept.map(({ job, trigger, startedAt, result }) => ({
        id: newAttemptId(),
        delivery_id: job.id,
        subscription_id: job.subscriptionId,
        attempt: job.attempts,
        trigger,
        started_at: startedAt,
        duration_ms: result.durationMs,
        status_code: result.status ?? null,
        outcome: result.ok ? 'success' : result.failure,
        error: result.ok ? null : result.message,
      })),
    );
    const held = await completeSuccessesTogether(trx, kept);
    // Whether a subscription may have an open failure run, as far as this batch knows.
    const mayBeFailing = new Map<string, boolean>();
    const out: AttemptReport[] = [];
    const rescheduled: string[] = [];
    for (const attempt of made) {
      const { job, trigger, result, update, finishedAt } = attempt;
      if (!live.has(job.id)) {
        out.push({ ...report(attempt), subscriptionDisabled: false, leaseLost: false, deleted: true });
        continue;
      }
      if (update.status === 'pending') rescheduled.push(job.id);
      const leaseHeld = held.get(attempt) ?? (await completeDelivery(trx, job, update));
      let subscriptionDisabled = false;
      if (trigger !== 'test') {
        const failing = mayBeFailing.get(job.subscriptionId) ?? job.subscriptionFailingSince !== null;
        if (result.ok) {
          if (failing) await markSubscriptionHealthy(trx, job.subscriptionId);
          mayBeFailing.set(job.subscriptionId, false);
        } else {
          subscriptionDisabled =
            result.failure === 'gone'
              ? await disableSubscription(trx, job.subscriptionId, finishedAt, DISABLED_GONE)
              : await markSubscriptionFailing(
                  trx,
                  job.subscriptionId,
                  finishedAt,
                  DISABLE_AFTER_FAILING_MS,
                  DISABLED_FAILING,
                );
          mayBeFailing.set(job.subscriptionId, true);
          if (subscriptionDisabled) await pauseDeliveries(trx, job.subscriptionId);
        }
      }
      out.push({ ...report(attempt), subscriptionDisabled, leaseLost: !leaseHeld, deleted: false });
    }
    // Paused (or disabled) while the attempt was in flight: the retry waits too.
    await pauseIfInactive(trx, rescheduled);
    return out;
  });
  for (const [i, { job, trigger, result, finishedAt }] of made.entries()) {
    const outcome = reports[i]!.outcome;
    deps.metrics?.attempts.inc({ outcome, trigger });
    deps.metrics?.attemptDuration.observe({ outcome }, result.durationMs / 1000);
    if (result.ok && trigger !== 'test') {
      deps.metrics?.deliveryLatency.observe(Math.max(0, finishedAt - job.eventCreatedAt) / 1000);
    }
  }
  return reports;
}

function report({
  job,
  result,
  update,
}: MadeAttempt): Omit<AttemptReport, 'subscriptionDisabled' | 'leaseLost' | 'deleted'> {
  return {
    deliveryId: job.id,
    eventId: job.eventId,
    attempt: job.attempts,
    success: result.ok,
    statusCode: result.status ?? null,
    durationMs: result.durationMs,
    outcome: result.ok ? 'success' : result.failure,
    error: result.ok ? null : result.message,
    nextAttemptAt: update.nextAttemptAt,
  };
}

/**
 * Scheduled successes of one claim with the same status are written with one statement, stamped with
 * the latest finish time among them (they finished within the same turn of the event loop).
 */
async function completeSuccessesTogether(
  trx: Kysely<Tables>,
  made: readonly MadeAttempt[],
): Promise<Map<MadeAttempt, boolean>> {
  const groups = new Map<string, MadeAttempt[]>();
  for (const attempt of made) {
    if (!attempt.result.ok || attempt.trigger !== 'schedule') continue;
    const key = `${attempt.job.token}\u0000${attempt.result.status}`;
    groups.set(key, [...(groups.get(key) ?? []), attempt]);
  }
  const held = new Map<MadeAttempt, boolean>();
  for (const group of groups.values()) {
    const first = group[0]!;
    const updated = await completeDelivered(trx, {
      ids: group.map((a) => a.job.id),
      token: first.job.token,
      at: Math.max(...group.map((a) => a.finishedAt)),
      status: first.result.status!,
    });
    for (const attempt of group) held.set(attempt, updated.has(attempt.job.id));
  }
  return held;
}

function nextState(
  job: DeliveryJob,
  trigger: AttemptTrigger,
  result: SendResult,
  now: number,
  random?: () => number,
): DeliveryUpdate {
  const common = { lastAttemptAt: now, lastStatus: result.status ?? null };
  if (result.ok)
    return { ...common, status: 'delivered', deliveredAt: now, nextAttemptAt: null, lastError: null };
  const failed = { ...common, lastError: result.message, nextAttemptAt: null };
  if (trigger === 'test' || result.failure === 'gone') return { ...failed, status: 'failed' };
  if (trigger === 'manual' && job.status !== 'pending') return { ...failed, status: job.status };
  const delay = nextRetryDelayMs(job.attempts, { retryAfterMs: result.retryAfterMs, random });
  return delay === undefined
    ? { ...failed, status: 'failed' }
    : { ...failed, status: 'pending', nextAttemptAt: now + delay };
}
