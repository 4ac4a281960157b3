import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { capturingLogger } from '../../../test/logger.js';
import { until } from '../../../test/until.js';
import { createAddressPolicy } from '../../lib/address-policy.js';
import { isForeignKeyViolation } from '../../store/dialect.js';
import { findSubscription } from '../../store/webhook-subscriptions.js';
import { recordPing } from '../events/record.js';
import { changeSubscription } from '../subscriptions/service.js';
import { createHarness, type Harness } from '../test-support/harness.js';
import { verifyWebhook } from '../verify.js';
import { DISABLED_FAILING, DISABLED_GONE } from './deliver.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from './schedule.js';

const DAY = 86_400_000;

describeEachDialect('webhook worker', (_getDatabase, dialect) => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness(dialect);
  });
  afterEach(async () => {
    await h.dispose();
  });

  const subscriptionNow = () => findSubscription(h.database.db, h.scope, h.subscription.id);

  it('delivers a recorded event once, signed, and marks it delivered', async () => {
    const { event } = await h.record();
    expect(await h.worker().drain()).toBe(1);
    expect(h.receiver.requests).toHaveLength(1);
    const [request] = h.receiver.requests;
    const verified = verifyWebhook(request!.body, request!.headers, h.subscription.secret, {
      scheme: 'both',
      now: () => h.clock.now(),
    });
    expect(verified).toEqual(event);
    expect(request!.headers).toMatchObject({
      'x-msv3-event': 'delivery.received',
      'x-msv3-request-id': event.id,
      'webhook-id': event.id,
      'x-msv3-attempt': '1',
      'content-type': 'application/json',
      'user-agent': 'test',
    });
    expect(await h.deliveries()).toMatchObject([
      { status: 'delivered', attempts: 1, next_attempt_at: null, locked_by: null },
    ]);
    expect(await h.worker().drain()).toBe(0);
  });

  it('retries on the schedule with the same webhook-id, then gives up after the tenth attempt', async () => {
    h.receiver.answer(() => ({ status: 500 }));
    const { event } = await h.record();
    const worker = h.worker();
    expect(await worker.drain()).toBe(1);
    for (const [index, delay] of RETRY_DELAYS_MS.entries()) {
      const [delivery] = await h.deliveries();
      expect(delivery).toMatchObject({
        status: 'pending',
        attempts: index + 1,
        next_attempt_at: h.clock.now() + delay,
      });
      h.clock.advance(delay - 1);
      expect(await worker.drain()).toBe(0);
      h.clock.advance(1);
      expect(await worker.drain()).toBe(1);
    }
    expect(await h.deliveries()).toMatchObject([
      { status: 'failed', attempts: MAX_ATTEMPTS, next_attempt_at: null },
    ]);
    expect(h.receiver.requests.map((r) => r.headers['x-msv3-attempt'])).toEqual(
      Array.from({ length: MAX_ATTEMPTS }, (_, i) => String(i + 1)),
    );
    expect(new Set(h.receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));
    expect(new Set(h.receiver.requests.map((r) => r.body)).size).toBe(1);
    // Each attempt is signed with its own timestamp.
    expect(new Set(h.receiver.requests.map((r) => r.headers['webhook-timestamp'])).size).toBe(MAX_ATTEMPTS);
  });

  it('keeps jittered delays within ±10 % of the schedule', async () => {
    for (const [random, factor] of [
      [() => 0, 0.9],
      [() => 0.999_999, 1.1],
    ] as const) {
      h.receiver.answer(() => ({ status: 502 }));
      await h.record();
      const startedAt = h.clock.now();
      await h.worker({}, { random }).drain();
      const pending = (await h.deliveries()).find((d) => d.status === 'pending' && d.attempts === 1)!;
      expect(pending.next_attempt_at! - startedAt).toBeCloseTo(5_000 * factor, -1);
      await h.database.db.deleteFrom('webhook_deliveries').execute();
    }
  });

  it('honours Retry-After on 429 within reason', async () => {
    h.receiver.answer(() => ({ status: 429, headers: { 'retry-after': '3600' } }));
    await h.record();
    await h.worker().drain();
    expect((await h.deliveries())[0]!.next_attempt_at).toBe(h.clock.now() + 3_600_000);
  });

  it('disables the subscription on 410 Gone, without retrying; later events wait paused until PATCH active re-enables it', async () => {
    h.receiver.answer(() => ({ status: 410 }));
    await h.record();
    await h.worker().drain();
    expect(await h.deliveries()).toMatchObject([{ status: 'failed', next_attempt_at: null }]);
    expect(await subscriptionNow()).toMatchObject({ active: false, disabledReason: DISABLED_GONE });
    const whileDisabled = await h.record();
    expect(whileDisabled.due).toBe(0);
    expect(await h.worker().drain()).toBe(0);
    expect(h.receiver.requests).toHaveLength(1);

    const deps = {
      db: h.database.db,
      clock: h.clock,
      addressPolicy: createAddressPolicy({ allowPrivateEndpoints: true }),
    };
    await changeSubscription(deps, h.scope, h.subscription.id, { active: true });
    expect(await subscriptionNow()).toMatchObject({ active: true, disabledReason: null, failingSince: null });
    h.receiver.answer(() => ({ status: 204 }));
    expect((await h.record()).deliveryIds).toHaveLength(1);
    expect(await h.worker().drain()).toBe(2);
    expect(h.receiver.requests.map((r) => r.headers['webhook-id'])).toContain(whileDisabled.event.id);
  });

  it('disables a subscription after five days of failures only, and resumes its pending deliveries when re-enabled', async () => {
    h.receiver.answer(() => ({ status: 500 }));
    const worker = h.worker();
    const start = h.clock.now();
    await h.record();
    await worker.drain();
    expect((await subscriptionNow())!.failingSince).toBe(start);
    // One new event a day, each failing; retries of older ones fail too.
    for (let day = 1; day <= 4; day++) {
      h.clock.set(start + day * DAY);
      await h.record();
      await worker.drain();
      expect(await subscriptionNow()).toMatchObject({ active: true });
    }
    h.clock.set(start + 5 * DAY - 1);
    await h.record();
    await worker.drain();
    expect(await subscriptionNow()).toMatchObject({ active: true });
    h.clock.set(start + 5 * DAY);
    await h.record();
    await worker.drain();
    expect(await subscriptionNow()).toMatchObject({ active: false, disabledReason: DISABLED_FAILING });

    // Disabled: waiting deliveries are paused instead of being sent.
    const statuses = (await h.deliveries()).map((d) => d.status);
    expect(statuses).toContain('paused');
    expect(statuses).not.toContain('pending');
    const sent = h.receiver.requests.length;
    h.clock.advance(DAY);
    expect(await worker.drain()).toBe(0);
    expect(h.receiver.requests.length).toBe(sent);

    h.receiver.answer(() => ({ status: 200 }));
    await changeSubscription(
      {
        db: h.database.db,
        clock: h.clock,
        addressPolicy: createAddressPolicy({ allowPrivateEndpoints: true }),
      },
      h.scope,
      h.subscription.id,
      {
        active: true,
      },
    );
    const resumed = await worker.drain();
    expect(resumed).toBeGreaterThan(0);
    expect((await h.deliveries()).filter((d) => d.status === 'pending')).toEqual([]);
  });

  it('ends a failure run with one success, so the five days start again', async () => {
    h.receiver.answer(() => ({ status: 500 }));
    const worker = h.worker();
    await h.record();
    await worker.drain();
    expect((await subscriptionNow())!.failingSince).not.toBeNull();
    h.receiver.answer(() => ({ status: 200 }));
    h.clock.advance(4 * DAY);
    await h.record();
    await worker.drain();
    expect((await subscriptionNow())!.failingSince).toBeNull();
  });

  it('re-delivers after a worker dies mid-attempt: its lease expires and another worker sends the same webhook-id', async () => {
    let calls = 0;
    h.receiver.answer(() => (++calls === 1 ? { status: 200, hang: true } : { status: 200 }));
    const { event } = await h.record();
    const crashed = h.worker({ leaseMs: 30_000 });
    const crashedRun = crashed.drain();
    await h.receiver.waitFor(1);

    const successor = h.worker();
    expect(await successor.drain()).toBe(0); // the lease still holds
    h.clock.advance(30_001);
    expect(await successor.drain()).toBe(1);
    expect(await h.deliveries()).toMatchObject([{ status: 'delivered', attempts: 2, locked_by: null }]);

    await crashed.stop({ timeoutMs: 0 });
    await crashedRun;
    expect(await h.deliveries()).toMatchObject([{ status: 'delivered', attempts: 2 }]);
    expect(h.receiver.requests.map((r) => [r.headers['webhook-id'], r.headers['x-msv3-attempt']])).toEqual([
      [event.id, '1'],
      [event.id, '2'],
    ]);
  });

  it('on stop, finishes quick attempts and gives back the leases of attempts still hanging', async () => {
    h.receiver.answer(() => ({ status: 200, hang: true }));
    await h.record();
    const worker = h.worker();
    worker.start();
    worker.wake();
    await h.receiver.waitFor(1);
    await worker.stop({ timeoutMs: 50 });
    expect(await h.deliveries()).toMatchObject([{ status: 'pending', attempts: 1, locked_by: null }]);

    h.receiver.answer(() => ({ status: 200 }));
    expect(await h.worker().drain()).toBe(1);
    expect(await h.deliveries()).toMatchObject([{ status: 'delivered', attempts: 2 }]);
  });

  it('keeps an attempt it could not record and records it once the database answers, without sending it again', async () => {
    const { event } = await h.record();
    // A real failure of the recording transaction: its first insert finds no table.
    await sql`alter table webhook_attempts rename to webhook_attempts_away`.execute(h.database.db);
    const { logger, messages } = capturingLogger();
    const worker = h.worker({ pollIntervalMs: 60_000 }, { logger });
    try {
      worker.start();
      worker.wake();
      await h.receiver.waitFor(1, 3_000);
      await until(
        'a failed record',
        () => messages('warn').includes('recording a webhook attempt failed; retrying'),
        5_000,
      );
      expect(await h.deliveries()).toMatchObject([{ status: 'pending', locked_by: expect.any(String) }]);
    } finally {
      await sql`alter table webhook_attempts_away rename to webhook_attempts`.execute(h.database.db);
    }
    await until(
      'the attempt recorded',
      async () => (await h.deliveries())[0]?.status === 'delivered',
      10_000,
    );
    await worker.stop();
    expect(await h.deliveries()).toMatchObject([{ status: 'delivered', attempts: 1, locked_by: null }]);
    expect(h.receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([event.id]);
  });

  it('fails a ping for a subscription deleted meanwhile with a foreign-key violation, which the test route answers 404', async () => {
    // The race the battery's fuzz found: POST /v1/webhooks/{id}/test read the subscription, a DELETE of it
    // committed, and the ping's delivery row then pointed nowhere (it was a 500).
    const subscription = (await findSubscription(h.database.db, h.scope, h.subscription.id))!;
    await sql`delete from webhook_subscriptions where id = ${subscription.id}`.execute(h.database.db);
    const failure = await recordPing(h.database.db, subscription, {
      now: h.clock.now(),
      token: 't',
      leaseMs: 1_000,
    })
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(isForeignKeyViolation(failure)).toBe(true);
    expect(isForeignKeyViolation(new Error('other'))).toBe(false);
  });

  it('wakes at once when an event commits, even inside a longer transaction (no polling)', async () => {
    let looks = 0;
    const worker = h.worker({ pollIntervalMs: 60_000 }, { onLook: () => looks++ });
    worker.start();
    await until('the first look', () => looks > 0, 5_000); // it finds nothing and waits for the poll
    const startedAt = Date.now();
    const { event } = await h.record();
    worker.wake();
    await h.receiver.waitFor(1, 3_000);
    expect(Date.now() - startedAt).toBeLessThan(1_000);

    await h.database.db.transaction().execute(async (trx) => {
      await h.record(trx);
      worker.wake(); // before the commit: SQLite's claim waits for the connection, PostgreSQL gets a NOTIFY
      await delay(200); // a longer transaction: the wake comes well before the commit
    });
    await h.receiver.waitFor(2, 3_000);
    expect(h.receiver.requests[0]!.headers['webhook-id']).toBe(event.id);
  });
});
