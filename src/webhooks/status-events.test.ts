import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { announceBreakerChanges, createStatusAnnouncer, type StatusFeed } from './status-events.js';
import { newScope, subscribe } from './test-support/fixtures.js';

describeEachDialect('wholesaler status announcements', (getDatabase) => {
  it('turn breaker transitions into one wholesaler.status_changed event per real change', async () => {
    const { db } = getDatabase();
    const clock = manualClock();
    const scope = await newScope(db);
    const wholesaler = 'sanacorp';
    await subscribe(db, scope, {
      url: 'http://127.0.0.1:9/',
      wholesaler,
      events: ['wholesaler.status_changed'],
    });
    const reports: Promise<void>[] = [];
    const announcer = createStatusAnnouncer({ db, clock, wake: () => woken++, logger: { warn() {} } });
    const recording = {
      report: (r: Parameters<typeof announcer.report>[0]) => {
        const done = announcer.report(r);
        reports.push(done);
        return done;
      },
    };
    let woken = 0;
    const listeners: Parameters<StatusFeed['subscribe']>[0][] = [];
    announceBreakerChanges(
      {
        subscribe: (listener) => {
          listeners.push(listener);
          return () => {};
        },
      },
      recording,
    );
    for (const status of ['up', 'down', 'recovering', 'down', 'recovering', 'up', 'up'] as const) {
      for (const listener of listeners) {
        listener({
          wholesaler,
          mode: 'test',
          accountId: null,
          status,
          cause: { reason: 'unreachable', detail: 'ECONNREFUSED' },
        });
      }
    }
    await Promise.all(reports);
    const data = (
      await db
        .selectFrom('webhook_events')
        .select('payload')
        .where('account_id', '=', scope.accountId)
        .execute()
    ).map((e) => JSON.parse(e.payload).data);
    expect(data.map((d) => [d.status, d.reason]).sort()).toEqual([
      ['down', 'unreachable: ECONNREFUSED'],
      ['up', 'answers again'],
    ]);
    expect(woken).toBe(2);
  });
});
