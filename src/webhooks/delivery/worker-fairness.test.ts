import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { until } from '../../../test/until.js';
import { recordEvent } from '../events/record.js';
import { sampleNotice, subscribe } from '../test-support/fixtures.js';
import { createHarness, type Harness } from '../test-support/harness.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';

describeEachDialect('webhook worker fairness', (_getDatabase, dialect) => {
  let h: Harness;
  let fast: Receiver;
  beforeEach(async () => {
    h = await createHarness(dialect);
    fast = await startReceiver();
    await subscribe(h.database.db, h.scope, { url: fast.url, wholesaler: 'gehe' }, h.clock);
    // The harness's own receiver is the slow one: it never answers.
    h.receiver.answer(() => ({ status: 200, hang: true }));
  });
  afterEach(async () => {
    await h.dispose();
    await fast.close();
  });

  /** `slow` events for the hanging receiver first, then `quick` for the fast one (due a moment later). */
  async function backlog(slow: number, quick: number): Promise<void> {
    for (let i = 0; i < slow; i++) await h.record();
    h.clock.advance(1);
    const event = { ...h.scope, type: 'delivery.received' as const, wholesaler: 'gehe', data: sampleNotice };
    for (let i = 0; i < quick; i++) await recordEvent(h.database.db, event, { clock: h.clock });
  }

  it('keeps at most perSubscription attempts in flight for one receiver, so a slow one leaves slots to others', async () => {
    await backlog(12, 3);
    const worker = h.worker({ concurrency: 8, perSubscription: 4 });
    worker.start();
    worker.wake();
    await fast.waitFor(3, 3_000);
    await h.receiver.waitFor(4, 3_000);
    expect(h.receiver.requests).toHaveLength(4);
    await worker.stop({ timeoutMs: 0 });
  });

  it('counts the attempts of other workers towards the cap', async () => {
    await backlog(6, 2);
    const first = h.worker({ concurrency: 3, perSubscription: 4 });
    first.start();
    first.wake();
    await h.receiver.waitFor(3, 3_000);
    const looks: number[] = [];
    const second = h.worker(
      { concurrency: 8, perSubscription: 4 },
      { onLook: (claimed) => looks.push(claimed) },
    );
    second.start();
    second.wake();
    await fast.waitFor(2, 3_000);
    await h.receiver.waitFor(4, 3_000);
    // The second worker has free slots, but its next look finds the slow receiver at its cap. (The first
    // has none free: its three attempts hang.)
    const before = looks.length;
    second.wake();
    expect(await until('a look', () => looks.length > before && looks.at(-1)!, 5_000)).toBe(0);
    expect(h.receiver.requests).toHaveLength(4);
    await Promise.all([first.stop({ timeoutMs: 0 }), second.stop({ timeoutMs: 0 })]);
  });

  it('claims the next delivery of a capped subscription as soon as one of its attempts ends, not at the next poll', async () => {
    await backlog(0, 10);
    const worker = h.worker({ concurrency: 8, perSubscription: 2, pollIntervalMs: 60_000 });
    worker.start();
    worker.wake();
    await fast.waitFor(10, 3_000);
    await worker.stop({ timeoutMs: 0 });
  });

  it('looks past the backlog of a subscription that reached its cap at once, not at the next poll', async () => {
    await backlog(20, 1); // more slow rows than one claim's window (concurrency × cap)
    const worker = h.worker({ concurrency: 2, perSubscription: 1, pollIntervalMs: 60_000 });
    worker.start(); // the first look claims at once (no wake, which would also end the sleep)
    await fast.waitFor(1, 3_000);
    expect(h.receiver.requests).toHaveLength(1);
    await worker.stop({ timeoutMs: 0 });
  });
});
