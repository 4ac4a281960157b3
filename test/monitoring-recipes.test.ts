import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type ObservedGateway, send, startObservedGateway } from './observed-gateway.js';

/**
 * The monitoring recipes in deploy/: the Prometheus alerting rules pass `promtool check rules` and their
 * own unit tests (`promtool test rules`), and every metric name in the rules and in the Grafana dashboard
 * is one a real gateway process exports at GET /metrics.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RULES = `${ROOT}deploy/prometheus/alerts.yml`;
const RULE_TESTS = `${ROOT}deploy/prometheus/alerts.test.yml`;
const DASHBOARD = `${ROOT}deploy/grafana/msv3-gateway.json`;
const MUST_RUN = process.env.CI === 'true';
const REDIS_URL = process.env.TEST_REDIS_URL || undefined;
const START_MS = 90_000;

const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'and',
  'or',
  'unless',
  'label_values',
]);

/** The metric names a PromQL expression reads (label matchers, groupings, ranges and strings left out). */
function metricNamesIn(expr: string): string[] {
  const labelValues = /label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(expr);
  if (labelValues !== null) return [labelValues[1]!];
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...new Set(bare.match(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b/g) ?? [])].filter(
    (word) => !PROMQL_WORDS.has(word),
  );
}

interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
  templating: { list: { type: string; query?: unknown }[] };
}

function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
}

/** Every expression of the dashboard: its panels' targets and its variables' queries. */
function dashboardExpressions(): string[] {
  const dashboard = readDashboard();
  const targets = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  const variables = dashboard.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => (variable.query as { query: string }).query);
  return [...targets, ...variables];
}

/** The expression of the dashboard's panel titled `title` (its one target). */
function panelExpression(title: string): string {
  const targets = readDashboard().panels.find((panel) => panel.title === title)?.targets ?? [];
  expect(targets, `the dashboard's panel "${title}"`).toHaveLength(1);
  return targets[0]!.expr;
}

function ruleExpressions(): string[] {
  const rules = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { expr: string }[] }[] };
  return rules.groups.flatMap((group) => group.rules.map((rule) => rule.expr));
}

/** The series names of an exposition: every `# TYPE` name, histograms with their three suffixes. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

describe('promtool on the alerting rules', () => {
  const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((path) => existsSync(path));
  if (promtool === undefined && !MUST_RUN) {
    console.warn(
      '[tests] promtool is missing: the alerting rules are not checked (apt-get install prometheus).',
    );
    it.skip('skipped: promtool is missing (CI installs Debian’s prometheus)', () => {});
    return;
  }
  it('checks the rules', () => {
    expect(promtool, 'promtool is missing; .ci/run installs Debian’s prometheus').toBeDefined();
    expect(execFileSync(promtool!, ['check', 'rules', RULES], { encoding: 'utf8' })).toContain('SUCCESS');
  });
  it('passes the rules’ unit tests', () => {
    expect(promtool, 'promtool is missing; .ci/run installs Debian’s prometheus').toBeDefined();
    expect(execFileSync(promtool!, ['test', 'rules', RULE_TESTS], { encoding: 'utf8' })).toContain('SUCCESS');
  });
  it('shows on the dashboard the CPU seconds of all replicas over all the requests they answered', () => {
    expect(promtool, 'promtool is missing; .ci/run installs Debian’s prometheus').toBeDefined();
    // Two replicas, sampled every minute: 30 and 15 CPU-seconds a minute for 65,280 and 15,360 requests.
    // Every rate (0.5 and 0.25 s/s; 1,024, 64 and 256 requests/s) is exact in binary floating point, so
    // the sums come out the same in whatever order promtool adds the series (it compares exactly, and
    // 0.3 + 0.1 against 0.1 + 0.3 once made this test fail now and then).
    const requests = (instance: string, route: string, perMinute: number) => ({
      series: `msv3_gateway_http_requests_total{instance="${instance}",method="POST",route="${route}",status="200"}`,
      values: `0+${perMinute}x15`,
    });
    const test = {
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            { series: 'process_cpu_seconds_total{instance="gw1"}', values: '0+30x15' },
            { series: 'process_cpu_seconds_total{instance="gw2"}', values: '0+15x15' },
            requests('gw1', '/v1/availability', 61_440),
            requests('gw1', '/v1/orders', 3_840),
            requests('gw2', '/v1/availability', 15_360),
          ],
          promql_expr_test: [
            {
              expr: panelExpression('CPU per request').replaceAll('$__rate_interval', '5m'),
              eval_time: '10m',
              exp_samples: [{ labels: '{}', value: 45 / 80_640 }],
            },
          ],
        },
      ],
    };
    const folder = mkdtempSync(join(tmpdir(), 'msv3-dashboard-'));
    try {
      const file = join(folder, 'cpu-per-request.test.yml');
      writeFileSync(file, stringify(test));
      expect(execFileSync(promtool!, ['test', 'rules', file], { encoding: 'utf8' })).toContain('SUCCESS');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('metric names against a real /metrics', () => {
  let observed: ObservedGateway;
  let exported: Set<string>;
  beforeAll(async () => {
    observed = await startObservedGateway({
      WHOLESALER_PROBE_INTERVAL_MS: '0',
      ...(REDIS_URL === undefined ? {} : { REDIS_URL, RATE_LIMIT_STORE: 'redis' }),
    });
    exported = exportedNames((await send(observed.gateway.url, '/metrics')).body);
  }, START_MS + 10_000);
  afterAll(() => observed?.close());

  it('reads the names out of PromQL', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (wholesaler, le) (rate(a_bucket{route=~"$route", x="by (y)"}[$__rate_interval]))) > 5 and b_total',
      ),
    ).toEqual(['a_bucket', 'b_total']);
    expect(
      metricNamesIn('label_values(msv3_gateway_wholesaler_calls_total{route=~"$route"}, wholesaler)'),
    ).toEqual(['msv3_gateway_wholesaler_calls_total']);
  });

  it.each([
    ['the Grafana dashboard', dashboardExpressions],
    ['the alerting rules', ruleExpressions],
  ])('%s uses only series the gateway exports', (_name, expressions) => {
    const names = new Set(expressions().flatMap(metricNamesIn));
    expect(names.size).toBeGreaterThan(5);
    const redisOnly = REDIS_URL === undefined ? ['msv3_gateway_redis_up'] : [];
    const missing = [...names].filter((name) => !exported.has(name) && !redisOnly.includes(name));
    expect(missing).toEqual([]);
  });

  it.runIf(REDIS_URL === undefined)(
    '(msv3_gateway_redis_up is exported only with Redis: TEST_REDIS_URL)',
    () => {
      console.warn(
        '[tests] TEST_REDIS_URL is not set: msv3_gateway_redis_up is not checked against /metrics.',
      );
    },
  );
});
