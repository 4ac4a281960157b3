import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createCallHistory, latencyQuantile } from './call-history.js';
import {
  createWholesalerMetrics,
  mergeWholesalerStatus,
  type TargetState,
  type WholesalerStatus,
} from './wholesaler-metrics.js';

const MINUTE = 60_000;
const phoenix = { wholesaler: 'phoenix', route: 'live' };

describe('call history', () => {
  it('keeps the last hour per minute and forgets what is older', () => {
    let now = 100 * MINUTE;
    const history = createCallHistory({ now: () => now, bucketsMs: [10, 100, 1000] });
    history.record('live/phoenix', 5, true);
    history.record('live/phoenix', 50, false);
    now += 2 * MINUTE;
    history.record('live/phoenix', 5_000, true);
    const { rows, startMinute, minutes } = history.rows();
    expect(startMinute).toBe(102 - 59);
    expect(minutes).toBe(60);
    const row = rows['live/phoenix']!;
    expect(row.calls.slice(-3)).toEqual([2, 0, 1]);
    expect(row.errors.slice(-3)).toEqual([1, 0, 0]);
    expect(row.buckets.at(-3)).toEqual([1, 1, 0, 0]);
    expect(row.buckets.at(-1)).toEqual([0, 0, 0, 1]);
    // An hour later the slot of minute 100 is reused for minute 160: the old calls are gone.
    now = 160 * MINUTE;
    history.record('live/phoenix', 5, true);
    const later = history.rows().rows['live/phoenix']!;
    expect(later.calls.reduce((a, b) => a + b)).toBe(2);
    expect(later.calls.at(-1)).toBe(1);
  });

  it('estimates a quantile within the bucket, as histogram_quantile does', () => {
    expect(latencyQuantile([0, 0, 0], [10, 100], 0.95)).toBeUndefined();
    expect(latencyQuantile([10, 0, 0], [10, 100], 0.5)).toBe(5);
    expect(latencyQuantile([5, 5, 0], [10, 100], 0.75)).toBe(55);
    expect(latencyQuantile([0, 0, 3], [10, 100], 0.99)).toBe(100);
  });
});

describe('wholesaler metrics', () => {
  it('groups targets by labels in the gauges and the status, and keeps the last probe', async () => {
    const registry = new Registry();
    let now = 1_000 * MINUTE;
    const metrics = createWholesalerMetrics(registry, { now: () => now });
    const targets: TargetState[] = [
      { ...phoenix, active: 2, queued: 1, circuit: 'closed' },
      { wholesaler: 'custom', route: 'live', active: 1, queued: 0, circuit: 'open' },
      { wholesaler: 'custom', route: 'live', active: 0, queued: 0, circuit: 'closed' },
    ];
    metrics.watch(() => targets);
    metrics.probe({ ...phoenix, up: false, reason: 'HTTP 503', latencyMs: 12 });
    now += 1_000;
    metrics.probe({ ...phoenix, up: true, reason: 'answers', latencyMs: 8 });
    const text = await registry.metrics();
    expect(text).toContain(
      'msv3_gateway_wholesaler_circuits{wholesaler="custom",route="live",state="open"} 1',
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_circuits{wholesaler="custom",route="live",state="closed"} 1',
    );
    expect(text).toContain('msv3_gateway_wholesaler_calls_in_flight{wholesaler="phoenix",route="live"} 2');
    expect(text).toContain('msv3_gateway_wholesaler_calls_queued{wholesaler="phoenix",route="live"} 1');
    expect(text).toContain('msv3_gateway_wholesaler_probe_up{wholesaler="phoenix",route="live"} 1');
    expect(text).toContain(
      'msv3_gateway_wholesaler_probes_total{wholesaler="phoenix",route="live",result="down"} 1',
    );

    const status = metrics.status();
    expect(status.groups.find((g) => g.wholesaler === 'phoenix')).toEqual({
      ...phoenix,
      circuits: { closed: 1, open: 0, half_open: 0 },
      active: 2,
      queued: 1,
      lastProbe: { at: now, up: true, reason: 'answers', latencyMs: 8 },
    });
  });

  it('merges workers: counts summed, the latest probe kept, histories aligned by minute', () => {
    const part = (at: number, probeAt: number, up: boolean, calls: number): WholesalerStatus => {
      const metrics = createWholesalerMetrics(new Registry(), { now: () => at });
      metrics.watch(() => [{ ...phoenix, active: 1, queued: 2, circuit: up ? 'closed' : 'open' }]);
      for (let i = 0; i < calls; i++)
        metrics.call({ ...phoenix, operation: 'bestellen', outcome: 'ok', latencyMs: 20, sent: true });
      const status = metrics.status();
      return {
        ...status,
        groups: status.groups.map((g) => ({
          ...g,
          lastProbe: { at: probeAt, up, reason: 'r', latencyMs: 1 },
        })),
      };
    };
    // The second worker's snapshot was taken a minute later: its last minute is one further on.
    const merged = mergeWholesalerStatus([part(500 * MINUTE, 10, true, 3), part(501 * MINUTE, 20, false, 2)]);
    expect(merged.groups).toEqual([
      {
        ...phoenix,
        circuits: { closed: 1, open: 1, half_open: 0 },
        active: 2,
        queued: 4,
        lastProbe: { at: 20, up: false, reason: 'r', latencyMs: 1 },
      },
    ]);
    const row = merged.history.rows['live/phoenix']!;
    expect(row.calls.slice(-2)).toEqual([3, 2]);
    expect(merged.history.startMinute).toBe(501 - 59);
  });

  it('counts refused calls but leaves them out of the duration and the history', async () => {
    const registry = new Registry();
    const metrics = createWholesalerMetrics(registry);
    metrics.call({
      ...phoenix,
      operation: 'bestellen',
      outcome: 'gateway_busy',
      latencyMs: 0,
      sent: false,
      refusalCause: 'queue_full',
    });
    const text = await registry.metrics();
    expect(text).toContain(
      'msv3_gateway_wholesaler_refusals_total{wholesaler="phoenix",route="live",cause="queue_full"} 1',
    );
    expect(text).not.toContain('msv3_gateway_wholesaler_call_duration_seconds_count{');
    expect(metrics.status().history.rows).toEqual({});
  });
});
