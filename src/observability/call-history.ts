/**
 * The last hour of calls per key, one slot per minute: how many, how many failed, and their latencies
 * in fixed buckets, so that several workers' histories add up (the operator status page plots them).
 * Memory is fixed per key: 60 slots, reused as the minutes pass.
 */

const MINUTE_MS = 60_000;
const MINUTES = 60;

/** A key's last hour, oldest minute first. */
interface HistoryRow {
  calls: number[];
  errors: number[];
  /** Per minute, the count of calls per latency bucket (`boundsMs`, plus one for the rest). */
  buckets: number[][];
}

export interface HistoryRows {
  /** The first minute shown (epoch ms / 60,000, rounded down). */
  startMinute: number;
  minutes: number;
  /** Upper bounds of the latency buckets, ms. */
  boundsMs: number[];
  rows: Record<string, HistoryRow>;
}

export interface CallHistory {
  record(key: string, latencyMs: number, ok: boolean): void;
  rows(): HistoryRows;
}

interface Ring {
  /** The minute each slot currently holds. */
  minuteOf: number[];
  calls: number[];
  errors: number[];
  buckets: number[][];
}

export function createCallHistory(options: { now: () => number; bucketsMs: readonly number[] }): CallHistory {
  const boundsMs = [...options.bucketsMs];
  const rings = new Map<string, Ring>();

  function slotOf(ring: Ring, minute: number): number {
    const slot = minute % MINUTES;
    if (ring.minuteOf[slot] !== minute) {
      ring.minuteOf[slot] = minute;
      ring.calls[slot] = 0;
      ring.errors[slot] = 0;
      ring.buckets[slot]!.fill(0);
    }
    return slot;
  }

  return {
    record(key, latencyMs, ok) {
      let ring = rings.get(key);
      if (ring === undefined) {
        ring = {
          minuteOf: new Array<number>(MINUTES).fill(-1),
          calls: new Array<number>(MINUTES).fill(0),
          errors: new Array<number>(MINUTES).fill(0),
          buckets: Array.from({ length: MINUTES }, () => new Array<number>(boundsMs.length + 1).fill(0)),
        };
        rings.set(key, ring);
      }
      const slot = slotOf(ring, Math.floor(options.now() / MINUTE_MS));
      ring.calls[slot]!++;
      if (!ok) ring.errors[slot]!++;
      let bucket = boundsMs.findIndex((bound) => latencyMs <= bound);
      if (bucket === -1) bucket = boundsMs.length;
      ring.buckets[slot]![bucket]!++;
    },
    rows() {
      const startMinute = Math.floor(options.now() / MINUTE_MS) - MINUTES + 1;
      const rows: Record<string, HistoryRow> = {};
      for (const [key, ring] of rings) {
        const row: HistoryRow = { calls: [], errors: [], buckets: [] };
        for (let minute = startMinute; minute < startMinute + MINUTES; minute++) {
          const slot = minute % MINUTES;
          const current = ring.minuteOf[slot] === minute;
          row.calls.push(current ? ring.calls[slot]! : 0);
          row.errors.push(current ? ring.errors[slot]! : 0);
          row.buckets.push(
            current ? [...ring.buckets[slot]!] : new Array<number>(boundsMs.length + 1).fill(0),
          );
        }
        rows[key] = row;
      }
      return { startMinute, minutes: MINUTES, boundsMs, rows };
    },
  };
}

/**
 * The `q` quantile (0..1) of a minute's latencies from its bucket counts, interpolated within the bucket
 * as Prometheus' `histogram_quantile` does; undefined without calls. Beyond the last bound: that bound.
 */
export function latencyQuantile(
  counts: readonly number[],
  boundsMs: readonly number[],
  q: number,
): number | undefined {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return undefined;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i]!;
    if (seen + count >= rank && count > 0) {
      if (i >= boundsMs.length) return boundsMs.at(-1);
      const lower = i === 0 ? 0 : boundsMs[i - 1]!;
      return lower + (boundsMs[i]! - lower) * ((rank - seen) / count);
    }
    seen += count;
  }
  return boundsMs.at(-1);
}
