import { expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { silentLogger } from '../../../test/logger.js';
import { manualClock } from '../../lib/clock.js';
import { newScope, subscribe } from '../../webhooks/test-support/fixtures.js';
import {
  announceBreakerChanges,
  announceProbeResult,
  createStatusAnnouncer,
  type StatusFeed,
  type StatusReport,
} from './announcer.js';
import type { MonitoredEndpoint } from './monitor.js';

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
    const announcer = createStatusAnnouncer({ db, clock, wake: () => woken++, logger: silentLogger });
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

  it('share one state with the probes: agreeing sources announce once, a probe does not overrule a fresh open circuit', async () => {
    const { db } = getDatabase();
    const clock = manualClock();
    const start = clock.now();
    const scope = await newScope(db, 'live');
    const wholesaler = 'custom-nord-abc123';
    await subscribe(db, scope, {
      url: 'http://127.0.0.1:9/',
      wholesaler,
      events: ['wholesaler.status_changed'],
    });
    const announcer = createStatusAnnouncer({ db, clock, logger: silentLogger });
    const pending: Promise<void>[] = [];
    const tracked = {
      report(report: StatusReport) {
        const done = announcer.report(report);
        pending.push(done);
        return done;
      },
    };
    let listener: Parameters<StatusFeed['subscribe']>[0] = () => {};
    const feed: StatusFeed = {
      subscribe(l) {
        listener = l;
        return () => {};
      },
    };
    announceBreakerChanges(feed, tracked);
    const breaker = { state: 'closed', retryAfterMs: 0 };
    const probe = announceProbeResult(tracked, () => breaker);
    const endpoint: MonitoredEndpoint = {
      target: `custom/${scope.accountId}/${wholesaler}`,
      custom: true,
      wholesaler,
      url: 'https://msv3.nord.example/verbindungTesten',
      mode: 'live',
      accountId: scope.accountId,
      version: 2,
    };
    const step = async (observe: () => unknown) => {
      clock.advance(1_000);
      await observe();
      await Promise.all(pending);
    };
    const fromBreaker =
      (status: 'up' | 'down', retryAfterMs = 0) =>
      () => {
        Object.assign(breaker, { state: status === 'up' ? 'closed' : 'open', retryAfterMs });
        listener({
          wholesaler,
          mode: 'live',
          accountId: scope.accountId,
          status,
          cause: { reason: 'timeout' },
        });
      };
    const fromProbe = (up: boolean, reason: string) => () => probe({ endpoint, up, reason });

    await step(fromBreaker('down', 30_000));
    await step(fromProbe(false, 'timeout'));
    await step(fromProbe(true, 'answers again')); // within the cool-down: the breaker wins
    breaker.retryAfterMs = 0;
    await step(fromProbe(true, 'answers again'));
    await step(fromBreaker('up'));
    await step(fromProbe(false, 'HTTP 503'));

    const events = await db
      .selectFrom('webhook_events')
      .select('payload')
      .where('account_id', '=', scope.accountId)
      .orderBy('created_at')
      .execute();
    const at = (step: number) => new Date(start + step * 1_000).toISOString();
    expect(
      events.map((e) => JSON.parse(e.payload).data).map((d) => [d.status, d.reason, d.changed_at]),
    ).toEqual([
      ['down', 'timeout', at(1)],
      ['up', 'answers again', at(4)],
      ['down', 'HTTP 503', at(6)],
    ]);
  });
});
