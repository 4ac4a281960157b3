import { Counter, Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../core/errors.js';
import { createWholesalerMetrics, type WholesalerMetrics } from '../observability/wholesaler-metrics.js';
import { CHANNEL, isGatewayMessage, type PrimaryMessage, type WorkerMessage } from './messages.js';
import { createMetricsGatherer, workerMetrics } from './metrics-relay.js';

/** A worker's registry with `requests` counted, and its wholesaler metrics with as many calls. */
function registryWith(requests: number, wholesalers?: WholesalerMetrics[]): Registry {
  const registry = new Registry();
  const metrics = createWholesalerMetrics(registry);
  metrics.watch(() => [{ wholesaler: 'phoenix', route: 'live', active: 1, queued: 0, circuit: 'open' }]);
  for (let i = 0; i < requests; i++)
    metrics.call({
      wholesaler: 'phoenix',
      route: 'live',
      operation: 'bestellen',
      outcome: 'ok',
      latencyMs: 30,
      sent: true,
    });
  wholesalers?.push(metrics);
  const counter = new Counter({
    name: 'msv3_gateway_http_requests_total',
    help: 'test',
    labelNames: ['route'],
    registers: [registry],
  });
  counter.inc({ route: '/v1/wholesalers' }, requests);
  return registry;
}

/**
 * Three workers and a primary wired through plain function calls, as the IPC channel would carry the
 * messages; `silent` workers never answer the primary.
 */
function cluster(counts: number[], options: { silent?: number[]; timeoutMs?: number } = {}) {
  const workers = new Map<number, ReturnType<typeof workerMetrics>>();
  const wholesalers: WholesalerMetrics[] = [];
  const gatherer = createMetricsGatherer({
    joinedSlots: () => [...workers.keys()],
    send: (slot, message) => setImmediate(() => workers.get(slot)?.receive(message)),
    timeoutMs: options.timeoutMs ?? 1_000,
  });
  counts.forEach((count, i) => {
    const slot = i + 1;
    const toPrimary = (message: WorkerMessage) => {
      if (options.silent?.includes(slot) && message.type === 'metrics-part') return;
      setImmediate(() => {
        if (message.type === 'metrics-request') gatherer.request(slot, message.id);
        if (message.type === 'metrics-part') gatherer.receive(slot, message.id, message.metrics);
        if (message.type === 'wholesalers-request') gatherer.request(slot, message.id, 'wholesalers');
        if (message.type === 'wholesalers-part') gatherer.receive(slot, message.id, message.status);
      });
    };
    const registry = registryWith(count, wholesalers);
    const own = wholesalers.at(-1)!;
    workers.set(
      slot,
      workerMetrics(registry, toPrimary, undefined, () => own.status()),
    );
  });
  return workers;
}

describe('cluster metrics', () => {
  it("answers a scrape at any worker with the sum of every worker's counters", async () => {
    const workers = cluster([3, 4, 5]);
    for (const slot of [1, 3]) {
      const text = await workers.get(slot)!.exposition();
      expect(text).toContain('msv3_gateway_http_requests_total{route="/v1/wholesalers"} 12');
    }
  });

  it("sums every worker's wholesaler series and merges their views for the status page", async () => {
    const workers = cluster([3, 4, 5]);
    const text = await workers.get(2)!.exposition();
    expect(text).toContain(
      'msv3_gateway_wholesaler_calls_total{wholesaler="phoenix",route="live",operation="bestellen",outcome="ok"} 12',
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_circuits{wholesaler="phoenix",route="live",state="open"} 3',
    );
    expect(text).toContain('msv3_gateway_wholesaler_calls_in_flight{wholesaler="phoenix",route="live"} 3');
    const status = await workers.get(3)!.wholesalerStatus();
    expect(status.groups).toMatchObject([{ wholesaler: 'phoenix', circuits: { open: 3 }, active: 3 }]);
    expect(status.history.rows['live/phoenix']?.calls.at(-1)).toBe(12);
  });

  it('leaves out a worker that does not answer in time, rather than failing the scrape', async () => {
    const workers = cluster([3, 4], { silent: [2], timeoutMs: 100 });
    expect(await workers.get(1)!.exposition()).toContain(
      'msv3_gateway_http_requests_total{route="/v1/wholesalers"} 3',
    );
  });

  it('answers at once, without waiting for the timeout, when a worker asked exits', async () => {
    vi.useFakeTimers();
    try {
      const sent: [number, PrimaryMessage][] = [];
      const gatherer = createMetricsGatherer({
        joinedSlots: () => [1, 2],
        send: (slot, message) => sent.push([slot, message]),
        timeoutMs: 2_000,
      });
      gatherer.request(1, 7, 'wholesalers');
      expect(sent.map(([slot, m]) => [slot, m.type])).toEqual([
        [1, 'wholesalers-collect'],
        [2, 'wholesalers-collect'],
      ]);
      gatherer.receive(1, 1, null);
      gatherer.gone(3);
      expect(sent).toHaveLength(2);
      gatherer.gone(2);
      expect(sent.at(-1)).toEqual([1, { channel: CHANNEL, type: 'wholesalers', id: 7, parts: [null] }]);
      vi.advanceTimersByTime(2_000);
      expect(sent).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers 503 service_unavailable when the primary does not answer', async () => {
    vi.useFakeTimers();
    try {
      const sent: WorkerMessage[] = [];
      const worker = workerMetrics(registryWith(1), (message) => sent.push(message), 500);
      const scrape = worker.exposition();
      const failure = scrape.catch((error: unknown) => error);
      vi.advanceTimersByTime(500);
      const error = await failure;
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).kind).toBe('service_unavailable');
      expect(sent).toEqual([{ channel: CHANNEL, type: 'metrics-request', id: 1 }]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends only well-formed messages', async () => {
    const sent: PrimaryMessage[] = [];
    const gatherer = createMetricsGatherer({ joinedSlots: () => [], send: (_slot, m) => sent.push(m) });
    gatherer.request(2, 7);
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(isGatewayMessage(sent[0])).toBe(true);
    expect(sent[0]).toMatchObject({ type: 'metrics', id: 7 });
  });
});
