import { expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { silentLogger } from '../../../test/logger.js';
import { manualClock } from '../../lib/clock.js';
import { createAccount } from '../../store/accounts.js';
import { deleteCustomWholesaler, upsertCustomWholesaler } from '../../store/custom-wholesalers.js';
import { createWholesalerStatusFeed } from './feed.js';
import type { MonitoredEndpoint } from './monitor.js';
import { watchWholesalerStatus } from './watch.js';

describeEachDialect('watchWholesalerStatus and deleted custom wholesalers', (getDatabase) => {
  it('stops probing a custom wholesaler by the round after its deletion, and keeps probing the others', async () => {
    const { db } = getDatabase();
    const clock = manualClock();
    const account = await createAccount(db, clock, { name: 'Apotheke' });
    const live = { accountId: account.id, mode: 'live' as const };
    const test = { accountId: account.id, mode: 'test' as const };
    for (const [tenant, id] of [
      [live, 'custom-nord-abc123'],
      [live, 'custom-sued-def456'],
      [test, 'custom-west-aaa111'],
    ] as const) {
      const endpoint = `https://${id}.example/msv3/v2.0`;
      await upsertCustomWholesaler(db, clock, tenant, { id, name: id, endpoint, version: 2 });
    }
    const custom = (id: string, mode: 'live' | 'test' = 'live'): MonitoredEndpoint => ({
      target: `custom/${account.id}/${id}`,
      custom: true,
      wholesaler: id,
      url: `https://${id}.example/msv3/v2.0/verbindungTesten`,
      mode,
      accountId: account.id,
      version: 2,
    });
    const inUse: MonitoredEndpoint[] = [
      {
        target: 'phoenix',
        custom: false,
        wholesaler: 'phoenix',
        url: 'https://p.example/verbindungTesten',
        mode: 'live',
        version: 1,
      },
      custom('custom-nord-abc123'),
      // A test key's `<id>_test` route of a custom wholesaler: its registration is `<id>`, in test mode.
      custom('custom-west-aaa111_test', 'test'),
      custom('custom-sued-def456'),
    ];
    // One round at a time: the probes of round n come after its n-th look at the endpoints in use.
    let rounds = 0;
    const probes: { round: number; target: string }[] = [];
    const watch = watchWholesalerStatus({
      db,
      clock,
      wake: () => {},
      logger: silentLogger,
      feed: createWholesalerStatusFeed(),
      upstream: {
        endpointsInUse: () => {
          rounds++;
          return inUse;
        },
        probe: async ({ target }) => {
          probes.push({ round: rounds, target });
          return { up: true, status: 401 };
        },
        breakerState: () => ({ state: 'closed', retryAfterMs: 0 }),
      },
      probeIntervalMs: 20,
    });
    // The watch's one job is the probe round; the scheduler that runs it every interval has tests of its
    // own (src/lib/periodic.test.ts), so the rounds run here one after the other.
    expect(watch.jobs.map((job) => [job.name, job.intervalMs])).toEqual([['wholesaler probe round', 20]]);
    const roundsDone = async (count: number) => {
      while (rounds < count) await watch.jobs[0]!.run();
    };
    try {
      await roundsDone(2);
      expect(probes.filter((p) => p.round === 1).map((p) => p.target)).toEqual(inUse.map((e) => e.target));

      expect(await deleteCustomWholesaler(db, live, 'custom-nord-abc123')).toBe(true);
      expect(await deleteCustomWholesaler(db, test, 'custom-west-aaa111')).toBe(true);
      const deletedIn = rounds;
      await roundsDone(deletedIn + 3);
      const later = probes.filter((p) => p.round > deletedIn + 1);
      expect(later.length).toBeGreaterThan(0);
      expect(new Set(later.map((p) => p.target))).toEqual(
        new Set(['phoenix', `custom/${account.id}/custom-sued-def456`]),
      );
    } finally {
      await watch.stop();
    }
  });
});
