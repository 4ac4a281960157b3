import { describe, expect, it } from 'vitest';
import type { Target } from '../target.js';
import { createWholesalerStatusFeed, type WholesalerStatusChange } from './feed.js';

describe('wholesaler status feed', () => {
  it('turns breaker transitions into up/down/recovering events and survives a failing listener', () => {
    const feed = createWholesalerStatusFeed();
    const seen: WholesalerStatusChange[] = [];
    feed.subscribe(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = feed.subscribe((change) => seen.push(change));
    const about: Target = { wholesaler: 'phoenix', route: 'live', accountId: null, custom: false };
    feed.publish({ target: 'phoenix', about, from: 'closed', to: 'open', at: 1 });
    feed.publish({ target: 'phoenix', about, from: 'open', to: 'half_open', at: 2 });
    unsubscribe();
    feed.publish({ target: 'phoenix', about, from: 'half_open', to: 'closed', at: 3 });
    expect(seen.map((c) => `${c.previousStatus}->${c.status}`)).toEqual(['up->down', 'down->recovering']);
    expect(seen[0]).toMatchObject({
      wholesaler: 'phoenix',
      route: 'live',
      mode: 'live',
      accountId: null,
      at: 1,
    });
  });

  it('names the account of a sandbox target, and the test mode of a custom test server', () => {
    const feed = createWholesalerStatusFeed();
    const seen: WholesalerStatusChange[] = [];
    feed.subscribe((change) => seen.push(change));
    const sandbox: Target = { wholesaler: 'phoenix', route: 'sandbox', accountId: 'acct_1', custom: false };
    const custom: Target = {
      wholesaler: 'custom-x_test',
      route: 'test_server',
      accountId: 'acct_2',
      custom: true,
    };
    feed.publish({ target: 'k1', about: sandbox, from: 'closed', to: 'open', at: 1 });
    feed.publish({ target: 'k2', about: custom, from: 'closed', to: 'open', at: 2 });
    expect(
      seen.map(({ wholesaler, route, mode, accountId }) => ({ wholesaler, route, mode, accountId })),
    ).toEqual([
      { wholesaler: 'phoenix', route: 'sandbox', mode: 'test', accountId: 'acct_1' },
      { wholesaler: 'custom-x_test', route: 'test_server', mode: 'test', accountId: 'acct_2' },
    ]);
  });
});
