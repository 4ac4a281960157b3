import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { capturingLogger } from '../../../test/logger.js';
import { until } from '../../../test/until.js';
import { deleteSubscription } from '../../store/webhook-subscriptions.js';
import { subscribe } from '../test-support/fixtures.js';
import { createHarness, type Harness } from '../test-support/harness.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import type { AttemptReport } from './deliver.js';

describeEachDialect('deleting a subscription during an attempt', (_getDatabase, dialect) => {
  let h: Harness;
  let other: Receiver;
  beforeEach(async () => {
    h = await createHarness(dialect);
    other = await startReceiver();
  });
  afterEach(async () => {
    await h.dispose();
    await other.close();
  });

  it('drops the attempt quietly, keeps the other results of its batch and goes on delivering', async () => {
    const { logger, lines } = capturingLogger();
    const logged = () => lines.map((line) => ({ level: line.level, message: line.msg }));
    const reports: AttemptReport[] = [];
    const worker = h.worker({ pollIntervalMs: 60_000 }, { logger, onAttempt: (r) => reports.push(r) });
    const kept = await subscribe(h.database.db, h.scope, { url: other.url }, h.clock);
    h.receiver.answer(() => ({ status: 200, delayMs: 300 }));
    other.answer(() => ({ status: 200, delayMs: 300 }));
    worker.start();

    const { deliveryIds } = await h.record();
    expect(deliveryIds).toHaveLength(2);
    worker.wake();
    await Promise.all([h.receiver.waitFor(1, 3_000), other.waitFor(1, 3_000)]);
    expect(await deleteSubscription(h.database.db, h.scope, h.subscription.id)).toBe(true);

    await until('both attempts reported', () => reports.length >= 2, 5_000);
    expect(reports).toHaveLength(2);
    expect(logged().filter((l) => l.level !== 'debug')).toEqual([]);
    const deletedReport = reports.find((r) => r.deleted);
    expect(deletedReport).toMatchObject({ success: true, leaseLost: false });
    expect(reports.find((r) => !r.deleted)).toMatchObject({ success: true, leaseLost: false });
    expect(logged()).toEqual([
      { level: 'debug', message: 'webhook delivery deleted during the attempt; result dropped' },
    ]);
    const rows = await h.database.db
      .selectFrom('webhook_deliveries')
      .select(['subscription_id', 'status', 'locked_by'])
      .execute();
    expect(rows).toEqual([{ subscription_id: kept.id, status: 'delivered', locked_by: null }]);
    expect(await h.database.db.selectFrom('webhook_attempts').select('subscription_id').execute()).toEqual([
      { subscription_id: kept.id },
    ]);

    // The worker goes on.
    other.answer(() => ({ status: 200 }));
    await h.record();
    worker.wake();
    await other.waitFor(2, 3_000);
    await until('the third attempt reported', () => reports.length >= 3, 5_000);
    expect(reports[2]).toMatchObject({ success: true, deleted: false });
    expect(h.receiver.requests).toHaveLength(1);
    expect(logged().filter((l) => l.level !== 'debug')).toEqual([]);
  });
});
