import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

const LABEL_SETS = [
  { method: 'GET', route: '/v1/a', status: '200' },
  { method: 'POST', route: '/v1/a', status: '200' },
  { method: 'POST', route: '/v1/a', status: '502' },
  { method: 'OTHER', route: 'unmatched', status: '404' },
] as const;
const LABEL_NAMES = ['method', 'route', 'status'] as const;
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.25, 1, 2.5, 10, 30];

type Operation =
  | { kind: 'series'; set: number; value: number }
  | { kind: 'plain'; set: number; value: number }
  | { kind: 'reset' };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('series' as const),
      set: fc.nat(LABEL_SETS.length - 1),
      value: fc.oneof(
        fc.constantFrom(0, -1, ...BUCKETS, 30.000001, 1e9),
        fc.double({ min: -1, max: 60, noNaN: true }),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('plain' as const),
      set: fc.nat(LABEL_SETS.length - 1),
      value: fc.double({ min: 0, max: 60, noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
);

function keyOf(set: number): string {
  const labels = LABEL_SETS[set]!;
  return `${labels.method} ${labels.route} ${labels.status}`;
}

async function exposition(registry: Registry) {
  return { text: await registry.metrics(), json: await registry.getMetricsAsJSON() };
}

describe('series found by key', () => {
  it('write exactly what prom-client writes for the same updates, across resets', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 60 }), async (operations) => {
        const expected = new Registry();
        const actual = new Registry();
        const config = (registry: Registry) => ({
          name: 'requests',
          help: 'Requests.',
          labelNames: LABEL_NAMES,
          registers: [registry],
        });
        const referenceCounter = new Counter(config(expected));
        const referenceHistogram = new Histogram({ ...config(expected), name: 'seconds', buckets: BUCKETS });
        const counter = new SeriesCounter(config(actual));
        const histogram = new SeriesHistogram({ ...config(actual), name: 'seconds', buckets: BUCKETS });
        for (const op of operations) {
          if (op.kind === 'reset') {
            expected.resetMetrics();
            actual.resetMetrics();
            continue;
          }
          const labels = { ...LABEL_SETS[op.set]! };
          referenceCounter.inc(labels);
          referenceHistogram.observe(labels, op.value);
          if (op.kind === 'series') {
            counter.incSeries(keyOf(op.set), () => ({ ...labels }));
            histogram.observeSeries(keyOf(op.set), () => ({ ...labels }), op.value);
          } else {
            counter.inc(labels);
            histogram.observe(labels, op.value);
          }
        }
        expect(await exposition(actual)).toEqual(await exposition(expected));
      }),
      { numRuns: 300 },
    );
  });

  it('asks for the labels only the first time a key is seen', () => {
    const counter = new SeriesCounter({ name: 'c', help: 'C.', labelNames: LABEL_NAMES, registers: [] });
    let asked = 0;
    for (let i = 0; i < 5; i++)
      counter.incSeries('GET /v1/a 200', () => {
        asked++;
        return { ...LABEL_SETS[0] };
      });
    expect(asked).toBe(1);
  });

  it('refuses what prom-client refuses: a label it does not know, a value that is not finite', () => {
    const histogram = new SeriesHistogram({ name: 'h', help: 'H.', labelNames: LABEL_NAMES, registers: [] });
    expect(() => histogram.observeSeries('x', () => ({ method: 'GET', colour: 'red' }) as never, 1)).toThrow(
      /colour/,
    );
    expect(() => histogram.observeSeries('y', () => ({ ...LABEL_SETS[0] }), Number.NaN)).toThrow(TypeError);
    const counter = new SeriesCounter({ name: 'c', help: 'C.', labelNames: LABEL_NAMES, registers: [] });
    expect(() => counter.incSeries('x', () => ({ method: 'GET', colour: 'red' }) as never)).toThrow(/colour/);
  });
});
