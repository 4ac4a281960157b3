import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { silentLogger } from '../../test/logger.js';
import { until } from '../../test/until.js';
import { manualClock } from '../lib/clock.js';
import { schedulePeriodicJobs } from '../lib/periodic.js';
import { newScope, subscribe } from '../webhooks/test-support/fixtures.js';
import type { StatusFeed } from '../wholesalers/status/announcer.js';
import type { MonitoredEndpoint } from '../wholesalers/status/monitor.js';
import type { WholesalerWatchOptions } from '../wholesalers/status/watch.js';
import { CHANNEL, type StatusChange, type StatusMessage } from './messages.js';
import { ANNOUNCER_SLOT, statusRelayFor } from './status-relay.js';

/** A breaker feed the test publishes into. */
function testFeed(): StatusFeed & { publish(change: StatusChange): void } {
  const listeners = new Set<(change: StatusChange) => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(change) {
      for (const listener of listeners) listener(change);
    },
  };
}

const endpoint = (target: string): MonitoredEndpoint => ({
  target,
  custom: false,
  wholesaler: target,
  mode: 'live',
  url: `http://127.0.0.1:9/${target}/verbindungTesten`,
  version: 2,
});

function watchOptions(overrides: Partial<WholesalerWatchOptions>): WholesalerWatchOptions {
  return {
    db: undefined as never,
    clock: manualClock(),
    wake: () => {},
    logger: silentLogger,
    feed: testFeed(),
    upstream: {
      endpointsInUse: () => [],
      probe: async () => ({ up: true }),
      breakerState: () => ({ state: 'closed', retryAfterMs: 0 }),
    },
    probeIntervalMs: 0,
    ...overrides,
  };
}

describe('status relay: a worker other than the announcer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('forwards its breaker transitions at once, and its endpoints in use every probe interval', async () => {
    vi.useFakeTimers();
    const sent: StatusMessage[] = [];
    const relay = statusRelayFor(2, (message) => sent.push(message), manualClock());
    const feed = testFeed();
    const watch = relay.watchStatus(
      watchOptions({
        feed,
        probeIntervalMs: 1_000,
        upstream: { ...watchOptions({}).upstream, endpointsInUse: () => [endpoint('phoenix')] },
      }),
    );
    const jobs = schedulePeriodicJobs(watch.jobs, silentLogger);
    jobs.start();
    const change: StatusChange = { wholesaler: 'phoenix', mode: 'live', accountId: null, status: 'down' };
    feed.publish(change);
    expect(sent).toEqual([{ channel: CHANNEL, type: 'status-change', change }]);
    vi.advanceTimersByTime(1_000);
    expect(sent[1]).toEqual({ channel: CHANNEL, type: 'endpoints-in-use', endpoints: [endpoint('phoenix')] });
    await jobs.stop();
    await watch.stop();
    feed.publish(change);
    vi.advanceTimersByTime(5_000);
    expect(sent).toHaveLength(2);
  });
});

describeEachDialect('status relay: the announcer', (getDatabase) => {
  it('announces a change forwarded by another worker once, together with its own breakers', async () => {
    const { db } = getDatabase();
    const scope = await newScope(db, 'live');
    await subscribe(db, scope, {
      url: 'http://127.0.0.1:9/',
      wholesaler: 'sanacorp',
      events: ['wholesaler.status_changed'],
    });
    const clock = manualClock();
    const relay = statusRelayFor(ANNOUNCER_SLOT, () => {}, clock);
    const own = testFeed();
    const watch = relay.watchStatus(watchOptions({ db, clock, feed: own }));
    const down: StatusChange = { wholesaler: 'sanacorp', mode: 'live', accountId: null, status: 'down' };
    relay.receive({ channel: CHANNEL, type: 'status-change', change: down, from: 2 });
    own.publish(down);
    relay.receive({ channel: CHANNEL, type: 'status-change', change: down, from: 3 });
    relay.receive({ channel: CHANNEL, type: 'status-change', change: { ...down, status: 'up' }, from: 2 });
    const statuses = async () =>
      (
        await db
          .selectFrom('webhook_events')
          .select('payload')
          .where('account_id', '=', scope.accountId)
          .execute()
      )
        .map((e) => JSON.parse(e.payload).data.status as string)
        .sort();
    // Each report is recorded or dropped as it arrives, in order: once the last one, 'up', is recorded,
    // a duplicate 'down' would have been started before it.
    await until('the change back up recorded', async () => (await statuses()).includes('up'), 5_000);
    expect(await statuses()).toEqual(['down', 'up']);
    await watch.stop();
  });

  it("probes the other workers' endpoints as its own, and forgets a worker silent for three intervals", async () => {
    const clock = manualClock();
    const probed: string[] = [];
    const relay = statusRelayFor(ANNOUNCER_SLOT, () => {}, clock);
    const watch = relay.watchStatus(
      watchOptions({
        db: getDatabase().db,
        clock,
        probeIntervalMs: 1_000,
        upstream: {
          ...watchOptions({}).upstream,
          endpointsInUse: () => [endpoint('phoenix')],
          probe: async ({ target }) => {
            probed.push(target);
            return { up: true };
          },
        },
      }),
    );
    const jobs = schedulePeriodicJobs(watch.jobs, silentLogger);
    jobs.start();
    relay.receive({
      channel: CHANNEL,
      type: 'endpoints-in-use',
      endpoints: [endpoint('phoenix'), endpoint('gehe')],
      from: 2,
    });
    const round = async () => {
      probed.length = 0;
      // A round calls every endpoint's probe at once (src/wholesalers/status/monitor.ts).
      await until('a probe round', () => probed.length > 0, 5_000);
      return [...probed].sort();
    };
    expect(await round()).toEqual(['gehe', 'phoenix']);
    clock.advance(3_001);
    expect(await round()).toEqual(['phoenix']);
    await jobs.stop();
    await watch.stop();
  }, 15_000);
});
