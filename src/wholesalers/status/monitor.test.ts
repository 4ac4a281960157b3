import { describe, expect, it } from 'vitest';
import { createWholesalerMonitor, type MonitoredEndpoint, type ProbeObservation } from './monitor.js';

const phoenix: MonitoredEndpoint = {
  target: 'phoenix',
  custom: false,
  wholesaler: 'phoenix',
  url: 'https://msv3.phoenix.example/verbindungTesten',
  mode: 'live',
  version: 2,
};
const custom: MonitoredEndpoint = {
  target: 'custom/acct_1/custom-nord-abc123',
  custom: true,
  wholesaler: 'custom-nord-abc123',
  url: 'http://127.0.0.1:9/verbindungTesten',
  mode: 'live',
  accountId: 'acct_1',
  version: 1,
};

type Answer = Awaited<ReturnType<Parameters<typeof createWholesalerMonitor>[0]['probe']>>;

function monitorWith(answers: Record<string, Answer[]>, endpoints: MonitoredEndpoint[]) {
  const observed: ProbeObservation[] = [];
  const probed: unknown[] = [];
  const inUse = { endpoints };
  const monitor = createWholesalerMonitor({
    probe: async (input) => {
      probed.push(input);
      const answer = answers[input.url]!.shift();
      if (answer === undefined) throw new Error('no more answers');
      return answer;
    },
    endpointsInUse: () => inUse.endpoints,
    onResult: (o) => {
      observed.push(o);
    },
  });
  return { monitor, observed, probed, inUse };
}

describe('createWholesalerMonitor', () => {
  it('probes every endpoint in use by its target and reports each result in a few words', async () => {
    const { monitor, observed, probed } = monitorWith(
      {
        [phoenix.url]: [
          { up: true, status: 401 },
          { up: false, status: 503 },
        ],
        [custom.url]: [{ up: false, error: { reason: 'unreachable', code: 'ECONNREFUSED' } }, { up: false }],
      },
      [phoenix, custom],
    );
    await monitor.check();
    await monitor.check();
    expect(probed.slice(0, 2)).toEqual([
      { target: 'phoenix', custom: false, url: phoenix.url, version: 2 },
      { target: custom.target, custom: true, url: custom.url, version: 1 },
    ]);
    expect(observed.map((o) => [o.endpoint.wholesaler, o.up, o.reason])).toEqual([
      ['phoenix', true, 'answers again'],
      ['custom-nord-abc123', false, 'unreachable: ECONNREFUSED'],
      ['phoenix', false, 'HTTP 503'],
      ['custom-nord-abc123', false, 'not reachable'],
    ]);
  });

  it('treats a throwing probe as down and probes only what is in use at each round', async () => {
    const { monitor, observed, inUse } = monitorWith({ [phoenix.url]: [{ up: true }] }, [phoenix]);
    await monitor.check();
    inUse.endpoints = [];
    expect(await monitor.check()).toEqual([]);
    inUse.endpoints = [phoenix];
    await monitor.check();
    expect(observed.map((o) => [o.up, o.reason])).toEqual([
      [true, 'answers again'],
      [false, 'Error: no more answers'],
    ]);
  });

  it('keeps probing the other endpoints when reporting one result fails', async () => {
    const errors: unknown[] = [];
    const monitor = createWholesalerMonitor({
      probe: async () => ({ up: true }),
      endpointsInUse: () => [phoenix, custom],
      onResult: (o) => {
        if (o.endpoint === phoenix) throw new Error('database gone');
      },
      onError: (error) => errors.push(error),
    });
    expect((await monitor.check()).map((o) => o.endpoint.target)).toEqual(['phoenix', custom.target]);
    expect(errors).toEqual([new Error('database gone')]);
  });

  it("announces nothing for a probe the gateway's shutdown stopped", async () => {
    const { monitor, observed } = monitorWith(
      { [phoenix.url]: [{ up: false, error: { reason: 'shutdown' } }], [custom.url]: [{ up: true }] },
      [phoenix, custom],
    );
    expect(await monitor.check()).toHaveLength(2);
    expect(observed.map((o) => [o.endpoint.wholesaler, o.up])).toEqual([['custom-nord-abc123', true]]);
  });

  it('runs one round at a time', async () => {
    let calls = 0;
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const monitor = createWholesalerMonitor({
      probe: async () => {
        calls++;
        await answered; // the probe is still out while the other checks come
        return { up: true };
      },
      endpointsInUse: () => [phoenix],
      onResult: () => {},
    });
    const rounds = [monitor.check(), monitor.check(), monitor.check()];
    answer();
    await Promise.all(rounds);
    expect(calls).toBe(1);
  });
});
