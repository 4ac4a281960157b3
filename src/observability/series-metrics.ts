import { Counter, Histogram, type HistogramConfiguration } from 'prom-client';

/**
 * The counters and histograms updated on every request, whose series are found once per label set.
 *
 * prom-client 15 finds a series by building a key from the label object on every update (its labelled
 * children too: `labels()` only binds the object), and a histogram counts into its bucket by the
 * bucket's bound as a property name, a number turned into a string each time. For the four updates of
 * an availability request that came to about 32 K instructions (docs/performance.md "Metrics series
 * found once"). Here the caller names the label set by a key it builds cheaply, the series is looked up
 * in a Map by that key, and the update adds to prom-client's own numbers: exposition, `reset()` and
 * the cluster's aggregation stay prom-client's. The series are prom-client's stored form (`hashMap`,
 * not part of its typed API); `series-metrics.test.ts` checks that both write the same exposition.
 */

type Labels<T extends string> = Partial<Record<T, string | number>>;

interface CounterSeries {
  labels: Record<string, unknown>;
  value: number;
}

interface HistogramSeries {
  labels: Record<string, unknown>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface Stored<S> {
  hashMap: Record<string, S>;
}

/** The series stored for `labels` (same names, same values), if any. */
function storedSeries<S extends { labels: Record<string, unknown> }>(
  store: Record<string, S>,
  labels: Record<string, unknown>,
): S | undefined {
  const names = Object.keys(labels);
  return Object.values(store).find(
    (series) =>
      Object.keys(series.labels).length === names.length &&
      names.every((name) => series.labels[name] === labels[name]),
  );
}

/** Series found by key; forgets them all when prom-client's storage was replaced (`reset()`). */
class SeriesIndex<S> {
  private readonly byKey = new Map<string, S>();
  private store: unknown;

  get(owner: Stored<S>, key: string): S | undefined {
    if (owner.hashMap !== this.store) {
      this.byKey.clear();
      this.store = owner.hashMap;
    }
    return this.byKey.get(key);
  }

  add(key: string, series: S): S {
    this.byKey.set(key, series);
    return series;
  }
}

export class SeriesCounter<T extends string> extends Counter<T> {
  private readonly index = new SeriesIndex<CounterSeries>();

  /**
   * Adds one to the series of the labels `labelsOf()` gives; `key` names that label set uniquely (the
   * label values joined), and `labelsOf` is called only the first time a key is seen.
   */
  incSeries(key: string, labelsOf: () => Labels<T>): void {
    const stored = this as unknown as Stored<CounterSeries>;
    const series = this.index.get(stored, key) ?? this.index.add(key, this.seriesOf(stored, labelsOf()));
    series.value += 1;
  }

  private seriesOf(stored: Stored<CounterSeries>, labels: Labels<T>): CounterSeries {
    this.inc(labels, 0); // prom-client validates the labels and creates the series at 0
    return storedSeries(stored.hashMap, labels)!;
  }
}

export class SeriesHistogram<T extends string> extends Histogram<T> {
  private readonly index = new SeriesIndex<HistogramSeries>();
  private readonly bounds: readonly number[];
  /** Each bound as the property name prom-client counts it under. */
  private readonly boundNames: readonly string[];

  constructor(configuration: HistogramConfiguration<T>) {
    super(configuration);
    this.bounds = (this as unknown as { upperBounds: number[] }).upperBounds;
    this.boundNames = this.bounds.map(String);
  }

  /** `observe` for the series of the labels `labelsOf()` gives, found by `key` (as `incSeries`). */
  observeSeries(key: string, labelsOf: () => Labels<T>, value: number): void {
    if (!Number.isFinite(value)) {
      this.observe(labelsOf(), value); // prom-client's own error
      return;
    }
    const stored = this as unknown as Stored<HistogramSeries>;
    const series = this.index.get(stored, key) ?? this.index.add(key, this.seriesOf(stored, labelsOf()));
    series.sum += value;
    series.count += 1;
    // The first bucket whose bound holds the value; none above the last (only +Inf, which is count).
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        series.bucketValues[this.boundNames[i]!]! += 1;
        return;
      }
    }
  }

  private seriesOf(stored: Stored<HistogramSeries>, labels: Labels<T>): HistogramSeries {
    const existing = storedSeries(stored.hashMap, labels);
    if (existing !== undefined) return existing;
    this.labels(labels); // prom-client's check of the label names
    this.zero(labels);
    return storedSeries(stored.hashMap, labels)!;
  }
}
