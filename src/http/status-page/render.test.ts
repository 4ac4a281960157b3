import { describe, expect, it } from 'vitest';
import { renderStatusPage, type StatusPageData } from './render.js';

const MINUTE = 60_000;

function data(groups: StatusPageData['wholesalers']['groups'], rows = {}): StatusPageData {
  return {
    version: '0.1.0',
    generatedAt: 100 * MINUTE,
    database: { dialect: 'postgres', up: false, latencyMs: 1000 },
    redis: { used: true, up: false },
    webhooks: { backlog: 12, worker: 'running' },
    wholesalers: {
      at: 100 * MINUTE,
      groups,
      history: { startMinute: 41, minutes: 60, boundsMs: [10, 100, 1000], rows },
    },
  };
}

const group = (wholesaler: string, circuits: Partial<Record<'closed' | 'open' | 'half_open', number>>) => ({
  wholesaler,
  route: 'live',
  circuits: { closed: 0, open: 0, half_open: 0, ...circuits },
  active: 0,
  queued: 0,
});

describe('the status page', () => {
  it('tells up, down and recovering apart, by circuit and by probe', () => {
    const html = renderStatusPage(
      data([
        group('phoenix', { closed: 2 }),
        group('sanacorp', { closed: 1, open: 1 }),
        group('gehe', { half_open: 1 }),
        {
          ...group('aep', { closed: 1 }),
          lastProbe: { at: 99 * MINUTE, up: false, reason: 'HTTP 503', latencyMs: 3 },
        },
      ]),
    );
    expect(html).toMatch(/data-wholesaler="phoenix" data-route="live" data-state="up"/);
    expect(html).toMatch(/data-wholesaler="sanacorp" data-route="live" data-state="down"/);
    expect(html).toMatch(/data-wholesaler="gehe" data-route="live" data-state="recovering"/);
    expect(html).toMatch(/data-wholesaler="aep" data-route="live" data-state="down"/);
    expect(html).toContain('down: HTTP 503, 3 ms, 60 s ago');
    expect(html).toContain('<title>msv3-gateway status (2 down)</title>');
    expect(html).toMatch(
      /Database<\/th><td><span class="badge down">down<\/span><\/td><td>postgres, no answer within 1\.0 s/,
    );
    expect(html).toContain('not connected: each process counts rate limits alone');
    expect(html).toContain('12 waiting; delivery worker running');
  });

  it('plots minutes with calls and leaves gaps for those without', () => {
    const calls = new Array<number>(60).fill(0);
    const errors = new Array<number>(60).fill(0);
    const buckets = Array.from({ length: 60 }, () => [0, 0, 0, 0]);
    for (const minute of [10, 11, 12, 40]) {
      calls[minute] = 4;
      buckets[minute] = [0, 4, 0, 0];
    }
    errors[11] = 2;
    const html = renderStatusPage(
      data([group('phoenix', { closed: 1 })], { 'live/phoenix': { calls, errors, buckets } }),
    );
    // One line through minutes 10 to 12, one dot for minute 40.
    expect(html.match(/<polyline /g)).toHaveLength(1);
    expect(html.match(/<circle /g)).toHaveLength(1);
    // Minute 11: half failed; the other minutes with calls: a baseline tick.
    expect(html.match(/fill="#c0392b"/g)).toHaveLength(1);
    expect(html).toContain('16 calls, 2 failed (12.5 %), p95');
  });

  it('escapes what it shows', () => {
    const html = renderStatusPage(
      data([
        {
          ...group('<script>alert(1)</script>', { open: 1 }),
          lastProbe: { at: 0, up: false, reason: '"><img src=x>', latencyMs: 1 },
        },
      ]),
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&#60;script&#62;');
  });
});
