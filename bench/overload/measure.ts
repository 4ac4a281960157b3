/**
 * What bench/overload reads off the gateway process while it runs: peak RSS (VmRSS from /proc), V8's heap
 * near that peak and the event-loop lag (prom-client's /metrics), CPU time, and how fast `/v1/health`
 * answers on a connection of its own. Everything stays on 127.0.0.1.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from './clients.js';

export interface Watched {
  peakRssKb: number;
  heapAtPeak: Record<string, number> | null;
  /** Mean of the scrapes' means and their worst p99, ms; null for the pass-through (no /metrics). */
  lag: { mean: number; p99: number } | null;
  health: { p50: number; p99: number };
}

/** The gateway's figures of one scenario, as both kinds of scenario report them. */
export function gatewayFigures(
  watched: Watched,
  peakInFlight: number,
  cpu: { before: number | null; after: number | null; seconds: number },
) {
  return {
    gateway_cpu_percent:
      cpu.before === null || cpu.after === null
        ? null
        : round((100 * (cpu.after - cpu.before)) / (cpu.seconds * 1000), 1),
    gateway_peak_rss_mb: round(watched.peakRssKb / 1024, 1),
    // Per call the wholesaler held at its peak: both sockets of a call and its share of everything else.
    gateway_peak_rss_kb_per_call_in_flight:
      peakInFlight === 0 ? null : Math.round(watched.peakRssKb / peakInFlight),
    gateway_memory_near_peak_mb: watched.heapAtPeak,
    // Mean of the /metrics scrapes during the run and their worst p99 (null for the pass-through).
    gateway_event_loop_lag_ms: watched.lag,
    health_ms: watched.health,
  };
}

/** `loop lag mean/p99 …` of a printed summary line. */
export function lagText(lag: Watched['lag']): string {
  return `loop lag mean/p99 ${lag === null ? 'n/a' : `${lag.mean}/${lag.p99} ms`}`;
}

/**
 * Samples the gateway's RSS every 200 ms (and /metrics at each new peak) and probes `GET /v1/health`
 * every 250 ms until `finish` is called.
 */
export function watchGateway(pid: number, url: string): { finish: () => Promise<Watched> } {
  let peakRssKb = 0;
  let heapAtPeak: Record<string, number> | null = null;
  // prom-client resets its event-loop histogram at each scrape: every scrape's figures are kept.
  const lagReads: { mean: number; p99: number }[] = [];
  let sampling = false;
  const sampler = setInterval(() => {
    const rss = rssKb(pid) ?? 0;
    if (rss <= peakRssKb) return;
    peakRssKb = rss;
    // Where the memory is at the new peak (at most one /metrics request at a time).
    if (sampling) return;
    sampling = true;
    void scrapeMetrics(url)
      .then((scraped) => {
        if (scraped === null) return;
        heapAtPeak = { rss_mb: round(rss / 1024, 1), ...scraped.heap };
        lagReads.push(scraped.lag);
      })
      .finally(() => {
        sampling = false;
      });
  }, 200);
  const healthMs: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const started = performance.now();
      try {
        await (await fetch(`${url}/v1/health`)).arrayBuffer();
        healthMs.push(performance.now() - started);
      } catch {}
      await sleep(250);
    }
  })();
  return {
    finish: async () => {
      probing = false;
      await prober;
      const last = await scrapeMetrics(url);
      if (last !== null) lagReads.push(last.lag);
      clearInterval(sampler);
      peakRssKb = Math.max(peakRssKb, rssKb(pid) ?? 0);
      return {
        peakRssKb,
        heapAtPeak,
        lag: lagSummary(lagReads),
        health: { p50: Math.round(percentile(healthMs, 50)), p99: Math.round(percentile(healthMs, 99)) },
      };
    },
  };
}

/**
 * The gateway's V8 heap and external memory (MB) and its event-loop lag since the previous scrape (ms),
 * from prom-client's default metrics on /metrics; null where there is no /metrics (the pass-through).
 */
async function scrapeMetrics(
  url: string,
): Promise<{ heap: Record<string, number>; lag: { mean: number; p99: number } } | null> {
  try {
    const response = await fetch(`${url}/metrics`);
    const text = await response.text();
    if (response.status !== 200) return null;
    const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    const mb = (name: string) => round(read(name) / 2 ** 20, 1);
    return {
      heap: {
        heap_used_mb: mb('nodejs_heap_size_used_bytes'),
        heap_total_mb: mb('nodejs_heap_size_total_bytes'),
        external_mb: mb('nodejs_external_memory_bytes'),
      },
      lag: {
        mean: read('nodejs_eventloop_lag_mean_seconds') * 1000,
        p99: read('nodejs_eventloop_lag_p99_seconds') * 1000,
      },
    };
  } catch {
    return null;
  }
}

/** The mean of the scrapes' means and the worst p99; a scrape too soon after another has no samples. */
function lagSummary(reads: { mean: number; p99: number }[]): { mean: number; p99: number } | null {
  const usable = reads.filter((r) => Number.isFinite(r.mean) && Number.isFinite(r.p99));
  if (usable.length === 0) return null;
  return {
    mean: round(sum(usable.map((r) => r.mean)) / usable.length, 1),
    p99: round(Math.max(...usable.map((r) => r.p99)), 1),
  };
}

/** VmRSS of a process in kB; null without /proc. */
function rssKb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** User + system CPU time of a process, ms; null without /proc. */
export function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

export function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

export function merge(records: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const record of records)
    for (const [key, value] of Object.entries(record)) out[key] = (out[key] ?? 0) + value;
  return out;
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
