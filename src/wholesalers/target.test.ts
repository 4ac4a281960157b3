import { describe, expect, it } from 'vitest';
import { createTargetDirectory, modeOf, type Target, targetKey } from './target.js';

describe('wholesaler targets', () => {
  const sandbox: Target = { wholesaler: 'phoenix', route: 'sandbox', accountId: 'acct_1', custom: false };
  const live: Target = { wholesaler: 'phoenix', route: 'live', accountId: null, custom: false };
  const testServer: Target = {
    wholesaler: 'phoenix_test',
    route: 'test_server',
    accountId: null,
    custom: false,
  };
  const custom: Target = {
    wholesaler: 'custom-x-abc123_test',
    route: 'test_server',
    accountId: 'acct_1',
    custom: true,
  };

  it('gives every target a key of its own: per account for the sandbox and custom endpoints', () => {
    const keys = [
      sandbox,
      { ...sandbox, accountId: 'acct_2' },
      live,
      testServer,
      custom,
      { ...custom, accountId: 'acct_2' },
    ].map(targetKey);
    expect(keys).toEqual([
      'sandbox/acct_1/phoenix',
      'sandbox/acct_2/phoenix',
      'phoenix',
      'phoenix_test',
      'custom/acct_1/custom-x-abc123_test',
      'custom/acct_2/custom-x-abc123_test',
    ]);
    // A custom id can never take a catalogue server's or the sandbox's budget.
    expect(targetKey({ ...live, wholesaler: 'x', custom: true, accountId: 'a' })).not.toBe(
      targetKey({ ...live, wholesaler: 'x' }),
    );
  });

  it('tells the mode from the route', () => {
    expect([sandbox, live, testServer, custom].map(modeOf)).toEqual(['test', 'live', 'test', 'test']);
  });

  it('finds a noted target by its key, and nothing else', () => {
    const directory = createTargetDirectory();
    const key = directory.note(custom);
    expect(key).toBe(targetKey(custom));
    expect(directory.find(key)).toEqual(custom);
    expect(directory.find(targetKey(sandbox))).toBeUndefined();
  });
});
