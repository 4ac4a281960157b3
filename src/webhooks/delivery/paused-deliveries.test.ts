import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { until } from '../../../test/until.js';
import { createAddressPolicy } from '../../lib/address-policy.js';
import { changeSubscription } from '../subscriptions/service.js';
import { createHarness, type Harness } from '../test-support/harness.js';
import { startReceiver } from '../test-support/receiver.js';
import { verifyWebhook } from '../verify.js';

const HOUR = 3_600_000;

describeEachDialect('paused subscriptions and resumed deliveries', (_getDatabase, dialect) => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness(dialect);
  });
  afterEach(async () => {
    await h.dispose();
  });

  /**
   * A running worker that only a wake (or a NOTIFY) makes look before its 60 s poll; `looked()` wakes
   * it and resolves with what the next look claimed.
   */
  function startWorker() {
    const looks: number[] = [];
    const worker = h.worker({ pollIntervalMs: 60_000 }, { onLook: (claimed) => looks.push(claimed) });
    worker.start();
    const looked = async () => {
      const before = looks.length;
      worker.wake();
      return until('a look for due deliveries', () => looks.length > before && looks.at(-1)!, 5_000);
    };
    const deps = {
      db: h.database.db,
      clock: h.clock,
      addressPolicy: createAddressPolicy({ allowPrivateEndpoints: true }),
      wake: worker.wake,
    };
    const patch = (input: { url?: string; active?: boolean }) =>
      changeSubscription(deps, h.scope, h.subscription.id, input);
    return { worker, patch, looks, looked };
  }

  /** Waits until no delivery is leased (the attempts in flight are recorded). */
  function settled(): Promise<Awaited<ReturnType<Harness['deliveries']>>> {
    return until(
      'no delivery leased',
      async () => {
        const rows = await h.deliveries();
        return rows.every((row) => row.locked_by === null) && rows;
      },
      2_000,
      20,
    );
  }

  it('queues events raised while a subscription is paused and sends them, signed, at once when it is resumed', async () => {
    const { patch, looks, looked } = startWorker();
    // The worker's first look finds nothing; it sleeps for the poll interval.
    await until('the first look', () => looks.length > 0, 5_000);
    expect(await patch({ active: false })).toMatchObject({ active: false });
    const first = await h.record();
    const second = await h.record();
    expect(first.deliveryIds).toHaveLength(1);
    expect(first.due).toBe(0);
    expect(await looked()).toBe(0);
    expect(h.receiver.requests).toHaveLength(0);
    expect((await h.deliveries()).map((d) => d.status)).toEqual(['paused', 'paused']);

    const resumedAt = Date.now();
    expect(await patch({ active: true })).toMatchObject({ active: true, disabledReason: null });
    const requests = await h.receiver.waitFor(2, 3_000);
    expect(Date.now() - resumedAt).toBeLessThan(1_000);
    const events = requests.map((request) =>
      verifyWebhook(request.body, request.headers, h.subscription.secret, {
        scheme: 'both',
        now: () => h.clock.now(),
      }),
    );
    expect(events.map((e) => e.id).sort()).toEqual([first.event.id, second.event.id].sort());
    expect(requests.map((r) => r.headers['x-msv3-attempt'])).toEqual(['1', '1']);
    expect((await settled()).map((d) => d.status)).toEqual(['delivered', 'delivered']);
  });

  it('resuming makes a backed-off delivery due now', async () => {
    h.receiver.answer(() => ({ status: 503, headers: { 'retry-after': '3600' } }));
    const { worker, patch } = startWorker();
    const { event } = await h.record();
    worker.wake();
    await h.receiver.waitFor(1, 3_000);
    expect(await settled()).toMatchObject([{ status: 'pending', next_attempt_at: h.clock.now() + HOUR }]);

    h.receiver.answer(() => ({ status: 200 }));
    await patch({ active: false });
    expect((await h.deliveries())[0]).toMatchObject({ status: 'paused' });
    const resumedAt = Date.now();
    await patch({ active: true });
    const [, retried] = await h.receiver.waitFor(2, 3_000);
    expect(Date.now() - resumedAt).toBeLessThan(1_000);
    expect(retried!.headers).toMatchObject({ 'webhook-id': event.id, 'x-msv3-attempt': '2' });
    expect(await settled()).toMatchObject([{ status: 'delivered', attempts: 2 }]);
  });

  it('a new URL for an active subscription makes its backed-off deliveries due now, at the new URL', async () => {
    h.receiver.answer(() => ({ status: 500 }));
    const { worker, patch } = startWorker();
    const { event } = await h.record();
    worker.wake();
    await h.receiver.waitFor(1, 3_000);
    expect(await settled()).toMatchObject([{ status: 'pending', attempts: 1 }]);
    expect((await h.deliveries())[0]!.next_attempt_at).toBeGreaterThan(h.clock.now());

    const moved = await startReceiver();
    try {
      const changedAt = Date.now();
      await patch({ url: moved.url });
      const [request] = await moved.waitFor(1, 3_000);
      expect(Date.now() - changedAt).toBeLessThan(1_000);
      expect(request!.headers).toMatchObject({ 'webhook-id': event.id, 'x-msv3-attempt': '2' });
      expect(h.receiver.requests).toHaveLength(1);
    } finally {
      await moved.close();
    }
  });

  it('a delivery in flight when its subscription is paused waits with the others instead of being retried', async () => {
    h.receiver.answer(() => ({ status: 500, delayMs: 300 }));
    const { worker, patch, looked } = startWorker();
    await h.record();
    worker.wake();
    await h.receiver.waitFor(1, 3_000);
    await patch({ active: false });
    expect(await settled()).toMatchObject([{ status: 'paused', attempts: 1 }]);

    h.clock.advance(HOUR);
    expect(await looked()).toBe(0);
    expect(h.receiver.requests).toHaveLength(1);
  });
});
