/**
 * The gateway's own garbage collection during a wrk run, read from its `/metrics` (prom-client's
 * `nodejs_gc_duration_seconds` by kind, and the availability requests it answered) before and after
 * the run. Pauses on the main thread only: concurrent marking and the scavenger's helper threads are in
 * the CPU figure, not here. A run with major collections under this load means something keeps
 * per-request objects alive long enough to reach the old generation (docs/performance.md "Responses
 * not kept in a Set").
 */

export interface GcTotals {
  requests: number;
  /** Seconds and count per kind (minor, major, incremental, weakcb). */
  kinds: Record<string, { seconds: number; count: number }>;
}

export interface GcPerRequest {
  minor_us_per_request: number;
  major_us_per_request: number;
  major_collections: number;
  requests: number;
}

const SAMPLE =
  /^(nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\}|msv3_gateway_http_requests_total\{[^}]*route="\/v1\/availability"[^}]*\}) ([0-9.e+-]+)$/gm;

export async function gcTotals(baseUrl: string): Promise<GcTotals> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
  const totals: GcTotals = { requests: 0, kinds: {} };
  for (const [, , field, kind, value] of (await response.text()).matchAll(SAMPLE)) {
    if (kind === undefined) {
      totals.requests += Number(value);
      continue;
    }
    const entry = totals.kinds[kind] ?? { seconds: 0, count: 0 };
    totals.kinds[kind] = entry;
    if (field === 'sum') entry.seconds = Number(value);
    else entry.count = Number(value);
  }
  return totals;
}

export function gcPerRequest(before: GcTotals, after: GcTotals): GcPerRequest {
  const requests = after.requests - before.requests;
  const delta = (kind: string, field: 'seconds' | 'count') =>
    (after.kinds[kind]?.[field] ?? 0) - (before.kinds[kind]?.[field] ?? 0);
  const usPerRequest = (kind: string) =>
    requests > 0 ? Math.round((delta(kind, 'seconds') * 1e7) / requests) / 10 : 0;
  return {
    minor_us_per_request: usPerRequest('minor'),
    major_us_per_request: usPerRequest('major'),
    major_collections: delta('major', 'count'),
    requests,
  };
}
