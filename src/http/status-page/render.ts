import { latencyQuantile } from '../../observability/call-history.js';
import type { WholesalerStatus } from '../../observability/wholesaler-metrics.js';
import { barPlot, linePlot } from './plot.js';

/** What the operator status page shows (docs/observability.md "The status page"). */
export interface StatusPageData {
  version: string;
  /** Epoch ms. */
  generatedAt: number;
  database: { dialect: string; up: boolean; latencyMs: number };
  /** Where rate limits are counted through Redis: whether its connection is up. */
  redis: { used: false } | { used: true; up: boolean };
  webhooks: { backlog: number | null; worker: 'running' | 'stopped' | 'disabled' };
  wholesalers: WholesalerStatus;
}

type Group = WholesalerStatus['groups'][number];
type State = 'up' | 'down' | 'recovering' | 'unknown' | 'not used';

const ROUTE_ORDER = ['live', 'test_server', 'sandbox'];
const ROUTE_NAMES: Record<string, string> = {
  live: 'live',
  test_server: 'test server',
  sandbox: 'sandbox',
};

/** The whole page: server-rendered HTML, inline CSS and SVG, no script and no external asset. */
export function renderStatusPage(data: StatusPageData): string {
  const groups = [...data.wholesalers.groups].sort(
    (a, b) =>
      ROUTE_ORDER.indexOf(a.route) - ROUTE_ORDER.indexOf(b.route) || a.wholesaler.localeCompare(b.wholesaler),
  );
  const down = groups.filter((group) => stateOf(group) === 'down').length;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="30">
<title>msv3-gateway status${down > 0 ? ` (${down} down)` : ''}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>msv3-gateway status</h1><p>version ${escapeHtml(data.version)}, ${escapeHtml(new Date(data.generatedAt).toISOString())}; refreshes every 30 s</p></header>
<section aria-labelledby="deps"><h2 id="deps">Dependencies</h2>
<table class="deps"><tbody>
${dependencyRows(data)}
</tbody></table></section>
<section aria-labelledby="wholesalers"><h2 id="wholesalers">Wholesalers</h2>
${groups.length === 0 ? '<p class="none">No wholesaler has been called or probed since the gateway started.</p>' : groups.map((group) => wholesalerCard(group, data)).join('\n')}
<p class="note">Custom wholesalers are shown together as <q>custom</q>. Circuits are counted per gateway process (and per account for the sandbox and custom wholesalers). Plots: the last 60 minutes, one point per minute with calls.</p>
</section>
</body>
</html>
`;
}

function dependencyRows(data: StatusPageData): string {
  const { database, redis, webhooks } = data;
  const rows = [
    row(
      'Database',
      database.up ? 'up' : 'down',
      database.up
        ? `${escapeHtml(database.dialect)}, answered in ${ms(database.latencyMs)}`
        : `${escapeHtml(database.dialect)}, no answer within ${ms(database.latencyMs)}`,
    ),
    redis.used
      ? row(
          'Redis',
          redis.up ? 'up' : 'down',
          redis.up
            ? 'rate limits shared'
            : 'not connected: each process counts rate limits alone until it is back',
        )
      : row('Redis', 'not used', 'rate limits are counted in memory or in the database'),
    row(
      'Webhook backlog',
      webhooks.backlog === null ? 'down' : webhooks.worker === 'stopped' ? 'down' : 'up',
      `${webhooks.backlog === null ? 'unknown (database)' : `${webhooks.backlog} waiting`}; delivery worker ${webhooks.worker}`,
    ),
  ];
  return rows.join('\n');
}

function row(name: string, state: State, detail: string): string {
  return `<tr><th scope="row">${name}</th><td>${badge(state)}</td><td>${detail}</td></tr>`;
}

function wholesalerCard(group: Group, data: StatusPageData): string {
  const state = stateOf(group);
  const name = `${group.wholesaler} (${ROUTE_NAMES[group.route] ?? group.route})`;
  const history = data.wholesalers.history;
  const series = history.rows[`${group.route}/${group.wholesaler}`];
  const p95 = series?.buckets.map((counts) => latencyQuantile(counts, history.boundsMs, 0.95));
  const errorRates = series?.calls.map((calls, i) =>
    calls === 0 ? undefined : (series.errors[i]! / calls) * 100,
  );
  const calls = series?.calls.reduce((a, b) => a + b, 0) ?? 0;
  const errors = series?.errors.reduce((a, b) => a + b, 0) ?? 0;
  const hourBuckets = series?.buckets.reduce((sum, counts) => sum.map((n, i) => n + counts[i]!));
  const hourP95 =
    hourBuckets === undefined ? undefined : latencyQuantile(hourBuckets, history.boundsMs, 0.95);
  const title = escapeHtml(name);
  return `<article class="wholesaler ${state}" data-wholesaler="${escapeHtml(group.wholesaler)}" data-route="${escapeHtml(group.route)}" data-state="${state}">
<h3>${title} ${badge(state)}</h3>
<dl>
<dt>Circuit</dt><dd>${circuits(group)}</dd>
<dt>Last probe</dt><dd>${lastProbe(group, data.generatedAt)}</dd>
<dt>Now</dt><dd>${group.active} in progress, ${group.queued} waiting</dd>
<dt>Last hour</dt><dd>${calls} ${calls === 1 ? 'call' : 'calls'}, ${errors} failed${calls > 0 ? ` (${percent(errors / calls)})` : ''}${hourP95 === undefined ? '' : `, p95 ${ms(hourP95)}`}</dd>
</dl>
<div class="plots">
<figure><figcaption>latency p95 per minute</figcaption>${linePlot(p95 ?? [], `${title}: latency p95 per minute, last hour`, 'ms')}</figure>
<figure><figcaption>failed calls per minute</figcaption>${barPlot(errorRates ?? [], `${title}: share of failed calls per minute, last hour`, 100, '%')}</figure>
</div>
</article>`;
}

function stateOf(group: Group): State {
  if (group.circuits.open > 0 || group.lastProbe?.up === false) return 'down';
  if (group.circuits.half_open > 0) return 'recovering';
  if (group.circuits.closed > 0 || group.lastProbe?.up === true) return 'up';
  return 'unknown';
}

function circuits(group: Group): string {
  const { closed, open, half_open: halfOpen } = group.circuits;
  const total = closed + open + halfOpen;
  if (total === 0) return 'not called yet';
  const parts = [
    open > 0 ? `${open} open` : '',
    halfOpen > 0 ? `${halfOpen} half-open (trial call)` : '',
    closed > 0 ? `${closed} closed` : '',
  ].filter(Boolean);
  return `${parts.join(', ')} (of ${total})`;
}

function lastProbe(group: Group, now: number): string {
  const probe = group.lastProbe;
  if (probe === undefined) return 'none yet';
  const ago = Math.max(0, Math.round((now - probe.at) / 1000));
  return `${probe.up ? 'answers' : 'down'}: ${escapeHtml(probe.reason)}, ${ms(probe.latencyMs)}, ${ago} s ago`;
}

function badge(state: State): string {
  return `<span class="badge ${state.replace(' ', '-')}">${state}</span>`;
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10} %`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1d2330;background:#fff}
h1{font-size:1.4rem;margin:0}header p{margin:.2rem 0 1rem;color:#555}
h2{font-size:1.1rem;border-bottom:1px solid #d5d9e0;padding-bottom:.2rem}
table.deps{border-collapse:collapse}table.deps th,table.deps td{text-align:left;padding:.25rem .8rem .25rem 0}
.wholesaler{border:1px solid #d5d9e0;border-left:6px solid #9aa3b2;border-radius:4px;padding:.5rem .8rem;margin:.6rem 0;max-width:46rem}
.wholesaler.up{border-left-color:#2e7d32}.wholesaler.down{border-left-color:#c0392b}.wholesaler.recovering{border-left-color:#e0a100}
.wholesaler h3{margin:.1rem 0 .4rem;font-size:1rem}
dl{display:grid;grid-template-columns:7rem 1fr;margin:0;gap:.1rem .5rem}dt{color:#555}dd{margin:0}
.plots{display:flex;flex-wrap:wrap;gap:1rem;margin-top:.4rem}figure{margin:0}figcaption{font-size:.8rem;color:#555}
.badge{display:inline-block;font-size:.75rem;padding:0 .4rem;border-radius:3px;color:#fff;background:#9aa3b2;vertical-align:middle}
.badge.up{background:#2e7d32}.badge.down{background:#c0392b}.badge.recovering{background:#b07d00}
.note,.none{color:#555;font-size:.85rem}
`;
