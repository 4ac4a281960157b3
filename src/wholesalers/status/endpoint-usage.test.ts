import { describe, expect, it } from 'vitest';
import { manualClock } from '../../lib/clock.js';
import type { Target } from '../target.js';
import { createEndpointUsage, IN_USE_WINDOW_MS } from './endpoint-usage.js';

const sandbox = {
  target: 'sandbox/acct_2/phoenix',
  baseUrl: 'http://127.0.0.1:9/sandbox/phoenix/msv3/v2.0',
  version: 2 as const,
};
const sandboxTarget: Target = { wholesaler: 'phoenix', route: 'sandbox', accountId: 'acct_2', custom: false };
const customTarget: Target = {
  wholesaler: 'custom-nord-abc123',
  route: 'live',
  accountId: 'acct_1',
  custom: true,
};
const custom = {
  target: 'custom/acct_1/custom-nord-abc123',
  baseUrl: 'https://msv3.nord.example/msv3/v1.0/',
  version: 1 as const,
  paths: { verbindungTesten: 'ws/VerbindungTesten' },
};

describe('endpoint usage', () => {
  it('lists each called endpoint once, with its mode, owner, verbindungTesten URL and MSV3 version', () => {
    const usage = createEndpointUsage({ clock: manualClock() });
    usage.record(sandbox, sandboxTarget);
    usage.record(custom, customTarget);
    usage.record(sandbox, sandboxTarget);
    expect(usage.inUse()).toEqual([
      {
        target: 'sandbox/acct_2/phoenix',
        custom: false,
        wholesaler: 'phoenix',
        mode: 'test',
        accountId: 'acct_2',
        url: 'http://127.0.0.1:9/sandbox/phoenix/msv3/v2.0/verbindungTesten',
        version: 2,
      },
      {
        target: 'custom/acct_1/custom-nord-abc123',
        custom: true,
        wholesaler: 'custom-nord-abc123',
        mode: 'live',
        accountId: 'acct_1',
        url: 'https://msv3.nord.example/msv3/v1.0/ws/VerbindungTesten',
        version: 1,
      },
    ]);
  });

  it('forgets an endpoint not called within the window, and a new call brings it back', () => {
    const clock = manualClock();
    const usage = createEndpointUsage({ clock });
    usage.record(sandbox, sandboxTarget);
    clock.advance(IN_USE_WINDOW_MS - 1_000);
    usage.record(custom, customTarget);
    clock.advance(2_000);
    expect(usage.inUse().map((e) => e.target)).toEqual([custom.target]);
    usage.record(sandbox, sandboxTarget);
    expect(usage.inUse().map((e) => e.target)).toEqual([custom.target, sandbox.target]);
  });
});
