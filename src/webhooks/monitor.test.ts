import { describe, expect, it } from 'vitest';
import { createWholesalerMonitor, type MonitoredEndpoint, type StatusTransition } from './monitor.js';

const phoenix: MonitoredEndpoint = {
  wholesaler: 'phoenix',
  url: 'https://msv3.phoenix.example/',
  mode: 'live',
};
const sandbox: MonitoredEndpoint = { wholesaler: 'phoenix', url: 'http://127.0.0.1:9/', mode: 'test' };

function monitorWith(states: Record<string, boolean[]>, endpoints: MonitoredEndpoint[] = [phoenix, sandbox]) {
  const transitions: StatusTransition[] = [];
  const probed: unknown[] = [];
  const inUse = { endpoints };
  const monitor = createWholesalerMonitor({
    probe: async (target) => {
      probed.push(target);
      const up = states[target.url]!.shift();
      if (up === undefined) throw new Error('no more answers');
      return up ? { up } : { up, error: { reason: 'unreachable', code: 'ECONNREFUSED' } };
    },
    endpointsInUse: () => inUse.endpoints,
    intervalMs: 60_000,
    onChange: (t) => {
      transitions.push(t);
    },
  });
  return { monitor, transitions, probed, inUse };
}

describe('createWholesalerMonitor', () => {
  it('takes the first probe as the baseline and reports each later change once', async () => {
    const { monitor, transitions, probed } = monitorWith({
      [phoenix.url]: [true, true, false, false, true],
      [sandbox.url]: [false, false, false, true, true],
    });
    for (let round = 0; round < 5; round++) await monitor.check();
    expect(transitions).toEqual([
      { endpoint: phoenix, up: false, reason: 'unreachable: ECONNREFUSED' },
      { endpoint: sandbox, up: true, reason: 'answers again' },
      { endpoint: phoenix, up: true, reason: 'answers again' },
    ]);
    expect(probed[0]).toEqual({ target: 'phoenix', wholesaler: 'phoenix', url: phoenix.url });
  });

  it('treats a throwing probe as down and forgets endpoints no longer in use', async () => {
    const { monitor, transitions, inUse } = monitorWith({ [phoenix.url]: [true, false, true] }, [phoenix]);
    await monitor.check();
    inUse.endpoints = [];
    await monitor.check();
    inUse.endpoints = [phoenix];
    await monitor.check(); // a new baseline (down), not a transition
    await monitor.check(); // up
    await monitor.check(); // the probe throws: down
    expect(transitions.map((t) => [t.up, t.reason])).toEqual([
      [true, 'answers again'],
      [false, 'Error: no more answers'],
    ]);
  });

  it('runs one round at a time', async () => {
    let calls = 0;
    const monitor = createWholesalerMonitor({
      probe: async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { up: true };
      },
      endpointsInUse: () => [phoenix],
      intervalMs: 60_000,
      onChange: () => {},
    });
    await Promise.all([monitor.check(), monitor.check(), monitor.check()]);
    expect(calls).toBe(1);
    await monitor.stop();
  });
});
