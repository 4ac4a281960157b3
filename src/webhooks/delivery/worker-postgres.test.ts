import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { silentLogger } from '../../../test/logger.js';
import { NOTIFY_CHANNEL } from '../events/record.js';
import { createHarness, type Harness } from '../test-support/harness.js';
import { listenForNotifications } from './pg-listen.js';

describeEachDialect(
  'two webhook workers on one PostgreSQL database',
  () => {
    let h: Harness;
    beforeEach(async () => {
      h = await createHarness('postgres');
    });
    afterEach(async () => {
      await h.dispose();
    });

    it('never send one delivery twice: every event reaches the receiver exactly once', async () => {
      const EVENTS = 400;
      // Some slow answers keep attempts in flight while the other worker claims.
      h.receiver.answer((request) => ({ status: 200, delayMs: request.body.length % 7 === 0 ? 20 : 0 }));
      const other = await h.database.openAnother();
      const pool = other.pgPool!;
      const perWorker = new Map<string, number>();
      const count = (name: string) => () => perWorker.set(name, (perWorker.get(name) ?? 0) + 1);
      const first = h.worker({ concurrency: 8, pollIntervalMs: 50 }, { onAttempt: count('first') });
      const second = h.worker(
        { concurrency: 8, pollIntervalMs: 50 },
        {
          db: other.db,
          listen: (onNotify) => listenForNotifications(pool.options, NOTIFY_CHANNEL, onNotify, silentLogger),
          onAttempt: count('second'),
        },
      );
      first.start();
      second.start();
      const recorded: string[] = [];
      for (let i = 0; i < EVENTS; i++) {
        recorded.push((await h.record(i % 2 === 0 ? h.database.db : other.db)).event.id);
        if (i % 50 === 0) first.wake();
      }
      first.wake();
      second.wake();
      await h.receiver.waitFor(EVENTS, 20_000);
      await first.stop();
      await second.stop();

      const hits = new Map<string, number>();
      for (const r of h.receiver.requests) {
        const id = String(r.headers['webhook-id']);
        hits.set(id, (hits.get(id) ?? 0) + 1);
      }
      expect(h.receiver.requests).toHaveLength(EVENTS);
      expect([...hits.values()].every((n) => n === 1)).toBe(true);
      expect([...hits.keys()].sort()).toEqual(recorded.sort());
      const deliveries = await h.deliveries();
      expect(deliveries.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
      expect(await h.database.db.selectFrom('webhook_attempts').select('id').execute()).toHaveLength(EVENTS);
      // Both took part: the claims really competed.
      expect(perWorker.get('first')! + perWorker.get('second')!).toBe(EVENTS);
      expect(perWorker.get('first')).toBeGreaterThan(0);
      expect(perWorker.get('second')).toBeGreaterThan(0);
    });
  },
  { only: 'postgres' },
);
