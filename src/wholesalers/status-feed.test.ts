import { describe, expect, it } from 'vitest';
import { describeTarget } from './registry.js';
import { createWholesalerStatusFeed, type WholesalerStatusChange } from './status-feed.js';

describe('wholesaler status feed', () => {
  it('names the wholesaler, route, mode and owner of every transport target', () => {
    // The sandbox has one circuit per account, so its changes concern that account only.
    expect(describeTarget('sandbox/acct_1/phoenix')).toEqual({
      wholesaler: 'phoenix',
      route: 'sandbox',
      mode: 'test',
      accountId: 'acct_1',
    });
    expect(describeTarget('sandbox/phoenix')).toEqual({
      wholesaler: 'phoenix',
      route: 'sandbox',
      mode: 'test',
      accountId: null,
    });
    expect(describeTarget('phoenix_test')).toMatchObject({
      route: 'test_server',
      mode: 'test',
      accountId: null,
    });
    expect(describeTarget('phoenix')).toMatchObject({ route: 'live', mode: 'live' });
    expect(describeTarget('custom/acct_1/custom-x-abc123_test')).toEqual({
      wholesaler: 'custom-x-abc123_test',
      route: 'test_server',
      mode: 'test',
      accountId: 'acct_1',
    });
  });

  it('turns breaker transitions into up/down/recovering events and survives a failing listener', () => {
    const feed = createWholesalerStatusFeed();
    const seen: WholesalerStatusChange[] = [];
    feed.subscribe(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = feed.subscribe((change) => seen.push(change));
    feed.publish({ target: 'phoenix', from: 'closed', to: 'open', at: 1 });
    feed.publish({ target: 'phoenix', from: 'open', to: 'half_open', at: 2 });
    unsubscribe();
    feed.publish({ target: 'phoenix', from: 'half_open', to: 'closed', at: 3 });
    expect(seen.map((c) => `${c.previousStatus}->${c.status}`)).toEqual(['up->down', 'down->recovering']);
    expect(seen[0]).toMatchObject({
      wholesaler: 'phoenix',
      route: 'live',
      mode: 'live',
      accountId: null,
      at: 1,
    });
  });
});
