import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockWholesaler } from '../src/mock/index.js';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { errorKindOf, errorShapeProblem, leakProblem } from './error-shape.js';
import { baseEnv, type Gateway, lastErrorLine, provisionKeys, startGateway } from './gateway.js';
import { type HealthPoller, startHealthPoller } from './health-poller.js';
import { startHostileServer } from './hostile-server.js';
import { HOSTILE_CASES, type HostileCase } from './hostile-upstream.js';
import { call, jsonOf } from './http.js';
import { duration, type Row, row } from './report.js';

/**
 * Each hostile behaviour is a custom wholesaler of its own (its circuit breaker is its own), called by a
 * live key with POST /v1/availability while GET /v1/health is polled every 50 ms. Also: with
 * ALLOW_PRIVATE_ENDPOINTS=true, link-local (cloud metadata) addresses must still be refused.
 */

const HEALTH_BOUND_MS = 100;
/** Health this slow means the event loop is stuck: the gateway is replaced before the next behaviour. */
const STALLED_MS = 2_000;
const CREDENTIALS = { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'hostile-secret' };

interface CaseResult {
  name: string;
  status: number | string;
  kind: string;
  ms: number;
  healthMaxMs: number;
  problems: string[];
}

export async function hostileUpstreamCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-hostile-'));
  const mock = await startMockWholesaler();
  const validAnswer = async (request: { headers: Record<string, string>; body: Buffer }) => {
    const outcome = await call(`${mock.baseUrl({ tenant: 'hostile', version: 2 })}/verfuegbarkeitAnfragen`, {
      method: 'POST',
      headers: {
        'content-type': request.headers['content-type'] ?? '',
        authorization: request.headers.authorization ?? '',
      },
      body: request.body,
    });
    return outcome.ok ? { status: outcome.status, body: outcome.body } : { status: 500, body: '' };
  };
  const cases = HOSTILE_CASES.filter((c) => !ctx.short || !c.long);
  const poller = startHealthPoller();
  const server = await startHostileServer(
    Object.fromEntries(HOSTILE_CASES.map((c) => [c.name, c.run])),
    validAnswer,
  );
  try {
    const databaseUrl = await ctx.postgres.createDatabase('hostile');
    const keys = await provisionKeys(databaseUrl);
    const catalogue = writeLoopbackCatalogue(folder, [
      { id: 'phoenix', version: 2, live: mock.baseUrl({ version: 2 }) },
    ]);
    const start = () =>
      startGateway(
        {
          ...baseEnv(databaseUrl),
          WHOLESALER_CATALOGUE: catalogue,
          ALLOW_PRIVATE_ENDPOINTS: 'true',
          UPSTREAM_CONNECT_TIMEOUT_MS: '2000',
          UPSTREAM_HEADERS_TIMEOUT_MS: '3000',
          UPSTREAM_BODY_TIMEOUT_MS: '3000',
          RATE_LIMIT_LIVE_POINTS: '100000',
        },
        ctx.gateways,
      );
    let gateway = await start();
    const idle = poller.watch(gateway.url);
    await new Promise((resolve) => setTimeout(resolve, ctx.short ? 3_000 : 5_000));
    const idleHealth = await idle.stop();
    // On a loaded machine even an idle gateway may answer health slower than 100 ms; the bound is then
    // 100 ms above that baseline, so that what is judged is the stall a behaviour adds.
    const healthBoundMs = HEALTH_BOUND_MS + (idleHealth.maxMs > HEALTH_BOUND_MS ? idleHealth.maxMs : 0);
    const results: CaseResult[] = [];
    const restarts: string[] = [];
    for (const hostile of cases) {
      const result = await runCase(gateway, keys.live, server.origin, hostile, healthBoundMs, poller);
      results.push(result);
      ctx.log(
        `hostile ${result.name}: ${result.status} ${result.kind} in ${duration(result.ms)}, health max ${duration(result.healthMaxMs)}${result.problems.length > 0 ? ` — ${result.problems.join('; ')}` : ''}`,
      );
      if (typeof result.status !== 'number' || result.healthMaxMs >= STALLED_MS) {
        // A stalled gateway would fail every later behaviour: replace it (same database) and go on.
        restarts.push(result.name);
        await gateway.kill();
        gateway = await start();
      }
    }
    const rows = summarise(results, idleHealth.maxMs, healthBoundMs, restarts);
    rows.push(await metadataRefused(gateway, keys));
    rows.push(
      row(
        'hostile: gateway process alive',
        gateway.exit() === undefined ? 'running after all behaviours' : `exited ${gateway.exit()}`,
        gateway.exit() === undefined,
        lastErrorLine(gateway.output()),
      ),
    );
    await gateway.kill();
    return rows;
  } finally {
    poller.close();
    await server.close();
    await mock.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function runCase(
  gateway: Gateway,
  liveKey: string,
  origin: string,
  hostile: HostileCase,
  healthBoundMs: number,
  poller: HealthPoller,
): Promise<CaseResult> {
  const headers = { 'content-type': 'application/json', 'x-api-key': liveKey };
  const registered = jsonOf(
    await call(`${gateway.url}/v1/wholesalers/custom`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: `hostile ${hostile.name}`,
        endpoint: `${origin}/${hostile.name}/msv3/v2.0`,
      }),
    }),
  );
  const id = (registered?.wholesaler as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string')
    return {
      name: hostile.name,
      status: 'no wholesaler',
      kind: '',
      ms: 0,
      healthMaxMs: 0,
      problems: [`registration failed: ${JSON.stringify(registered)}`],
    };
  hostile.prepare?.();
  const health = poller.watch(gateway.url);
  const outcome = await call(`${gateway.url}/v1/availability`, {
    method: 'POST',
    headers: { ...headers, ...CREDENTIALS },
    body: JSON.stringify({ wholesaler: id, items: [{ pzn: '04114918', quantity: 1 }] }),
    timeoutMs: hostile.boundMs + 3_000,
  });
  const { maxMs: healthMaxMs } = await health.stop();
  const problems: string[] = [];
  if (!outcome.ok) {
    problems.push(`no answer (${outcome.failure})`, `took ${duration(outcome.ms)} without an answer`);
    return { name: hostile.name, status: outcome.failure, kind: '', ms: outcome.ms, healthMaxMs, problems };
  }
  const kind = outcome.status === 200 ? 'ok' : (errorKindOf(outcome.body) ?? '?');
  if (!hostile.expect.includes(kind)) problems.push(`${kind} not in [${hostile.expect.join(', ')}]`);
  if (outcome.status >= 400) {
    const shape = errorShapeProblem(outcome.status, outcome.body);
    if (shape !== undefined) problems.push(shape);
  }
  if (outcome.body.includes('root:x:0:0')) problems.push('answer contains /etc/passwd');
  const leak = leakProblem(outcome.body, [CREDENTIALS['x-msv3-password'], liveKey]);
  if (leak !== undefined) problems.push(`leak: ${leak}`);
  if (outcome.ms > hostile.boundMs)
    problems.push(`took ${duration(outcome.ms)} > ${duration(hostile.boundMs)}`);
  if (healthMaxMs > healthBoundMs) problems.push(`health took ${duration(healthMaxMs)}`);
  return { name: hostile.name, status: outcome.status, kind, ms: outcome.ms, healthMaxMs, problems };
}

function summarise(
  results: CaseResult[],
  idleHealthMs: number,
  healthBoundMs: number,
  restarts: string[],
): Row[] {
  const rows: Row[] = [];
  const wrongKind = results.filter((r) =>
    r.problems.some((p) => !p.startsWith('took') && !p.startsWith('health')),
  );
  const slow = results.filter((r) => r.problems.some((p) => p.startsWith('took')));
  const healthSlow = results.filter((r) => r.healthMaxMs > healthBoundMs);
  const worst = [...results].sort((a, b) => b.healthMaxMs - a.healthMaxMs)[0];
  rows.push(
    row(
      'hostile upstream: right error kind',
      `${results.length} behaviours, ${results.length - wrongKind.length} answered as expected${wrongKind.length > 0 ? `; wrong: ${wrongKind.map((r) => `${r.name} → ${r.status} ${r.kind}`).join(', ')}` : ''}`,
      wrongKind.length === 0,
      wrongKind.map((r) => `${r.name}: ${r.problems.join('; ')}`).join(' | '),
    ),
  );
  rows.push(
    row(
      'hostile upstream: answered within bound',
      `slowest ${slow.length > 0 ? '' : 'within bound: '}${[...results]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 3)
        .map((r) => `${r.name} ${duration(r.ms)}`)
        .join(', ')}${slow.length > 0 ? `; over its bound: ${slow.map((r) => r.name).join(', ')}` : ''}`,
      slow.length === 0,
      slow.map((r) => `${r.name}: ${r.problems.join('; ')}`).join(' | '),
    ),
  );
  rows.push(
    row(
      'hostile upstream: /v1/health ≤ 100 ms meanwhile',
      `max ${duration(worst?.healthMaxMs ?? 0)} (${worst?.name}); idle baseline max ${duration(idleHealthMs)}, so bound ${duration(healthBoundMs)}${healthSlow.length > 0 ? `; over it during ${healthSlow.map((r) => `${r.name} ${duration(r.healthMaxMs)}`).join(', ')}` : ''}${restarts.length > 0 ? `; gateway stalled and was replaced after ${restarts.join(', ')}` : ''}`,
      healthSlow.length === 0,
      'the event loop stalled while the gateway handled a hostile answer',
    ),
  );
  const table = results
    .map((r) => `${r.name}: ${r.status} ${r.kind} ${duration(r.ms)} (health ${duration(r.healthMaxMs)})`)
    .join('; ');
  process.stderr.write(`  hostile results: ${table}\n`);
  return rows;
}

/** ALLOW_PRIVATE_ENDPOINTS admits private networks, never link-local addresses (cloud metadata). */
async function metadataRefused(gateway: Gateway, keys: { test: string; live: string }): Promise<Row> {
  const urls = [
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.170.2/v2/credentials',
    'http://[fe80::1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
  ];
  const accepted: string[] = [];
  const headers = { 'content-type': 'application/json', 'x-api-key': keys.live };
  for (const url of urls) {
    const custom = await call(`${gateway.url}/v1/wholesalers/custom`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'metadata', endpoint: url }),
    });
    if (!custom.ok || errorKindOf(custom.body) !== 'endpoint_not_allowed')
      accepted.push(
        `custom ${url} → ${custom.ok ? `${custom.status} ${errorKindOf(custom.body) ?? ''}` : custom.failure}`,
      );
    const hook = await call(`${gateway.url}/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url, wholesaler: 'phoenix', events: ['delivery.received'] }),
    });
    if (!hook.ok || errorKindOf(hook.body) !== 'endpoint_not_allowed') {
      accepted.push(
        `webhook ${url} → ${hook.ok ? `${hook.status} ${errorKindOf(hook.body) ?? ''}` : hook.failure}`,
      );
      // Accepted: delete it at once, so that nothing is ever sent there.
      const id = jsonOf(hook)?.id;
      if (typeof id === 'string')
        await call(`${gateway.url}/v1/webhooks/${id}`, {
          method: 'DELETE',
          headers: { 'x-api-key': keys.live },
        });
    }
  }
  return row(
    'link-local endpoints refused (ALLOW_PRIVATE_ENDPOINTS=true)',
    `${urls.length * 2} registrations of link-local/metadata URLs: ${accepted.length} accepted${accepted.length > 0 ? ` (${accepted.slice(0, 4).join('; ')}${accepted.length > 4 ? '; …' : ''})` : ''}`,
    accepted.length === 0,
    'a custom wholesaler or webhook may point at the cloud metadata service',
  );
}
