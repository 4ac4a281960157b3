import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockWholesaler } from '../src/mock/index.js';
import { generateApiKey } from '../src/store/api-key-secret.js';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { errorShapeProblem, leakProblem, retryAfterProblem, undocumented5xxProblem } from './error-shape.js';
import { type Endpoint, endpointsOf, type FuzzContext, fuzzRequest } from './fuzz-cases.js';
import { finalStatus, RAW_CASES, rawBody, rawExchange } from './fuzz-raw.js';
import { baseEnv, type Gateway, lastErrorLine, provisionKeys, startGateway } from './gateway.js';
import { call, jsonOf } from './http.js';
import { freePort } from './ports.js';
import { seededRandom } from './random.js';
import { duration, type Row, row } from './report.js';

/**
 * Fuzzed requests over every operation of the running gateway's OpenAPI document, odd raw requests
 * (CONNECT, framing), and a flood of bad API keys. Figures: undocumented 5xx, hangs, bodies outside the
 * error shape, Retry-After, leaks (the marker password or internals, in answers and in the logs).
 */

const REQUEST_TIMEOUT_MS = 20_000;
const CONCURRENCY = 32;

/** Up to `limit` examples per problem, for the report. */
class Problems {
  readonly counts = new Map<string, number>();
  readonly examples: string[] = [];
  add(kind: string, example: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    if (this.examples.filter((e) => e.startsWith(`${kind}:`)).length < 3)
      this.examples.push(`${kind}: ${example}`);
  }
  total(prefix: string): number {
    let n = 0;
    for (const [kind, count] of this.counts) if (kind.startsWith(prefix)) n += count;
    return n;
  }
  summary(prefix: string): string {
    return [...this.counts]
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, n]) => `${n} × ${k.slice(prefix.length)}`)
      .join(', ');
  }
}

export async function fuzzCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-fuzz-'));
  const wholesaler = await startMockWholesaler({ lateAnswerMs: 3_000, slowAnswerMs: 200 });
  const sink = await startSink();
  const closedPort = await freePort();
  try {
    const databaseUrl = await ctx.postgres.createDatabase('fuzz');
    const keys = await provisionKeys(databaseUrl);
    const catalogue = writeLoopbackCatalogue(folder, [
      {
        id: 'phoenix',
        version: 2,
        live: wholesaler.baseUrl({ tenant: 'live/phoenix', version: 2 }),
        test: wholesaler.baseUrl({ tenant: 'test/phoenix', version: 2 }),
      },
      {
        id: 'gehe',
        version: 1,
        live: wholesaler.baseUrl({ tenant: 'live/gehe', version: 1 }),
        test: wholesaler.baseUrl({ tenant: 'test/gehe', version: 1 }),
      },
      { id: 'sanacorp', version: 2, live: `http://127.0.0.1:${closedPort}/msv3/v2.0` },
    ]);
    const gateway = await startGateway(
      {
        ...baseEnv(databaseUrl),
        WHOLESALER_CATALOGUE: catalogue,
        ALLOW_PRIVATE_ENDPOINTS: 'true',
        RATE_LIMIT_TEST_POINTS: '1000000',
        RATE_LIMIT_LIVE_POINTS: '1000000',
        UPSTREAM_CONNECT_TIMEOUT_MS: '1000',
        UPSTREAM_HEADERS_TIMEOUT_MS: '1000',
        UPSTREAM_BODY_TIMEOUT_MS: '1000',
        MOCK_LATE_ANSWER_MS: '1500',
        MOCK_SLOW_ANSWER_MS: '200',
        REQUEST_TIMEOUT_MS: '2000',
        BREAKER_COOLDOWN_MS: '2000',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
      ctx.gateways,
    );
    const password = `pw-${randomBytes(9).toString('hex')}`;
    const openapi = jsonOf(await call(`${gateway.url}/v1/openapi.json`));
    if (openapi === undefined) throw new Error('GET /v1/openapi.json did not answer JSON');
    const endpoints = endpointsOf(openapi as never);
    const fuzz: FuzzContext = {
      keys,
      password,
      known: await knownIds(
        gateway.url,
        keys,
        password,
        sink.url,
        wholesaler.baseUrl({ tenant: 'custom', version: 2 }),
      ),
      urls: [
        sink.url,
        `${sink.url}/hooks`,
        wholesaler.baseUrl({ tenant: 'custom', version: 2 }),
        `http://127.0.0.1:${closedPort}/msv3/v2.0`,
        'http://localhost:1/',
      ],
    };
    const count = ctx.short ? 1_000 : 20_000;
    ctx.log(`fuzz: ${count} requests over ${endpoints.length} operations (seed ${ctx.seed})`);
    const rows = await fuzzRequests(gateway, endpoints, fuzz, count, ctx.seed);
    rows.push(await rawRequests(gateway, keys.test, password));
    rows.push(await badKeyFlood(gateway));
    const logLeak = leakProblem(gateway.output(), [password], false);
    rows.push(
      row(
        'fuzz: password in the logs',
        logLeak === undefined ? '0 (marker password searched in all output)' : logLeak,
        logLeak === undefined,
        'the MSV3 password reached a log line',
      ),
    );
    rows.push(
      row(
        'fuzz: gateway process alive',
        gateway.exit() === undefined ? 'running after the fuzz' : `exited ${gateway.exit()}`,
        gateway.exit() === undefined,
        lastErrorLine(gateway.output()),
      ),
    );
    await gateway.kill();
    return rows;
  } finally {
    await wholesaler.close();
    await new Promise((resolve) => sink.server.close(resolve));
    sink.server.closeAllConnections();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function fuzzRequests(
  gateway: Gateway,
  endpoints: Endpoint[],
  fuzz: FuzzContext,
  count: number,
  seed: number,
): Promise<Row[]> {
  const rng = seededRandom(seed);
  const problems = new Problems();
  const statusClasses = new Map<string, number>();
  const times: number[] = [];
  const slowest: { label: string; ms: number }[] = [];
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const endpoint = rng.pick(endpoints);
      let request: ReturnType<typeof fuzzRequest>;
      try {
        request = fuzzRequest(endpoint, rng, fuzz);
      } catch (error) {
        // A bug of the fuzzer itself must not end the check: it is counted and shown.
        problems.add('no answer:fuzzer error', String(error));
        continue;
      }
      const outcome = await call(`${gateway.url}${request.target}`, {
        method: request.method,
        headers: request.headers as Record<string, string>,
        ...(request.body === undefined ? {} : { body: request.body }),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      const label = `${request.method} ${request.target.slice(0, 80)}`;
      if (!outcome.ok) {
        // A body over BODY_LIMIT_BYTES may be cut off by the 413 and the close that follows it while the
        // client still writes (EPIPE/ECONNRESET): counted apart, not as a request left without an answer.
        const oversized = request.body !== undefined && Buffer.byteLength(request.body) > 1024 * 1024;
        problems.add(
          outcome.failure === 'timeout'
            ? 'hang'
            : oversized
              ? `cut:${outcome.failure}`
              : `no answer:${outcome.failure}`,
          label,
        );
        continue;
      }
      times.push(outcome.ms);
      slowest.push({ label: `${label} → ${outcome.status} ${outcome.body.slice(0, 60)}`, ms: outcome.ms });
      if (slowest.length > 20) slowest.sort((a, b) => b.ms - a.ms).splice(5);
      const cls = `${Math.floor(outcome.status / 100)}xx`;
      statusClasses.set(cls, (statusClasses.get(cls) ?? 0) + 1);
      if (outcome.status >= 400 && request.method !== 'HEAD') {
        const shape = errorShapeProblem(outcome.status, outcome.body);
        if (shape !== undefined) problems.add(`shape:${outcome.status}`, `${label} → ${shape}`);
      }
      // A HEAD answer has no body to read the kind from: only a 500 is known to be undocumented.
      const undocumented =
        request.method === 'HEAD'
          ? outcome.status === 500
            ? '500 to HEAD'
            : undefined
          : undocumented5xxProblem(outcome.status, outcome.body, endpoint.callsWholesaler);
      if (undocumented !== undefined)
        problems.add(`5xx:${undocumented}`, `${label} → ${outcome.body.slice(0, 160)}`);
      const unlisted = request.asDocumented
        ? unlistedKind(outcome.status, outcome.body, endpoint)
        : undefined;
      if (unlisted !== undefined)
        problems.add(`unlisted:${unlisted}`, `${label} → ${outcome.body.slice(0, 160)}`);
      const retry = retryAfterProblem(outcome.status, outcome.headers['retry-after']);
      if (retry !== undefined) problems.add(`retry:${retry}`, label);
      const leak = leakProblem(outcome.body, [fuzz.password, fuzz.keys.test, fuzz.keys.live]);
      if (leak !== undefined) problems.add(`leak:${leak}`, `${label} → ${outcome.body.slice(0, 160)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = performance.now() - started;
  times.sort((a, b) => a - b);
  const p99 = times[Math.floor(times.length * 0.99)] ?? 0;
  const classes = [...statusClasses]
    .sort()
    .map(([c, n]) => `${n} ${c}`)
    .join(', ');
  const operations = new Set(endpoints.map((e) => `${e.method} ${e.path}`)).size;
  for (const example of problems.examples) process.stderr.write(`  fuzz example ${example}\n`);
  for (const slow of slowest.sort((a, b) => b.ms - a.ms).slice(0, 5))
    process.stderr.write(`  fuzz slowest ${duration(slow.ms)} ${slow.label}\n`);
  const hangs = problems.total('hang');
  const cut = problems.total('no answer');
  const cutOversized = problems.total('cut:');
  return [
    row(
      'fuzz: requests, hangs',
      `${count} requests over all ${operations} operations of /v1/openapi.json in ${duration(elapsed)} (${classes}); p99 ${duration(p99)}; ${hangs} hangs (> ${REQUEST_TIMEOUT_MS / 1000} s), ${cut} without an answer (and ${cutOversized} bodies over the 1 MB limit cut off while being sent)`,
      hangs === 0 && cut === 0,
      `${problems.summary('hang')} ${problems.summary('no answer:')}`,
    ),
    row(
      'fuzz: undocumented 5xx',
      `${problems.total('5xx:')}${problems.total('5xx:') > 0 ? ` (${problems.summary('5xx:')})` : ''}`,
      problems.total('5xx:') === 0,
      problems.examples.find((e) => e.startsWith('5xx:')),
    ),
    row(
      'fuzz: bodies outside the error shape',
      `${problems.total('shape:')}${problems.total('shape:') > 0 ? ` (${problems.summary('shape:')})` : ''}`,
      problems.total('shape:') === 0,
      problems.examples.find((e) => e.startsWith('shape:')),
    ),
    row(
      'fuzz: error kinds the document does not list',
      `${problems.total('unlisted:')}${problems.total('unlisted:') > 0 ? ` (${problems.summary('unlisted:')})` : ''}`,
      problems.total('unlisted:') === 0,
      problems.examples.find((e) => e.startsWith('unlisted:')),
    ),
    row(
      'fuzz: Retry-After on 429/503',
      `${problems.total('retry:')} answers without it`,
      problems.total('retry:') === 0,
      problems.summary('retry:'),
    ),
    row(
      'fuzz: leaks in answers',
      `${problems.total('leak:')}${problems.total('leak:') > 0 ? ` (${problems.summary('leak:')})` : ''}`,
      problems.total('leak:') === 0,
      problems.examples.find((e) => e.startsWith('leak:')),
    ),
  ];
}

/**
 * An error answer whose kind the OpenAPI document does not list for the operation at that status: the
 * document (and the docs and client built from it) would mislead. Undefined when listed or not an error.
 */
function unlistedKind(status: number, body: string, endpoint: Endpoint): string | undefined {
  if (status < 400) return undefined;
  let kind: unknown;
  try {
    kind = (JSON.parse(body) as { error?: unknown }).error;
  } catch {
    return undefined; // errorShapeProblem reports it
  }
  // A path value such as `..` can leave the route (the URL is normalised): no operation answers then.
  if (typeof kind !== 'string' || kind === 'route_not_found') return undefined;
  return endpoint.errorKinds[String(status)]?.includes(kind) ? undefined : `${status} ${kind}`;
}

async function rawRequests(gateway: Gateway, apiKey: string, password: string): Promise<Row> {
  const port = Number(new URL(gateway.url).port);
  const unanswered: string[] = [];
  const outside: string[] = [];
  let slowest = 0;
  const outcomes = await Promise.all(
    RAW_CASES.map(async (c) => ({
      c,
      outcome: await rawExchange(port, c.bytes(apiKey), 15_000, c.holdOpen),
    })),
  );
  for (const { c, outcome } of outcomes) {
    slowest = Math.max(slowest, outcome.ms);
    if (outcome.status === undefined) {
      unanswered.push(c.name);
      continue;
    }
    const body = rawBody(outcome.text);
    if (outcome.status >= 400 && body !== undefined && body !== '') {
      const shape = errorShapeProblem(outcome.status, body) ?? leakProblem(body, [password]);
      if (shape !== undefined) outside.push(`${c.name} (${outcome.status}: ${shape})`);
    } else if (outcome.status >= 400 && body === '')
      outside.push(`${c.name} (${outcome.status} with an empty body)`);
    if (finalStatus(outcome.text) === undefined) unanswered.push(c.name);
  }
  const figures = `${RAW_CASES.length} raw requests: ${unanswered.length} unanswered${unanswered.length > 0 ? ` (${unanswered.join('; ')})` : ''}, ${outside.length} error bodies outside the shape${outside.length > 0 ? ` (${outside.join('; ')})` : ''}; slowest ${duration(slowest)}`;
  return row(
    'raw requests (CONNECT, framing, odd bytes)',
    figures,
    unanswered.length === 0 && outside.length === 0,
    'a connection closed or left without an HTTP answer, or a non-JSON error',
  );
}

/** 300 requests with well-formed but unknown keys from one client: failed authentication must be throttled. */
async function badKeyFlood(gateway: Gateway): Promise<Row> {
  const statuses = new Map<number, number>();
  let withoutRetryAfter = 0;
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < 300) {
      next++;
      // Well-formed (right checksum), so the gateway must look each one up: malformed keys cost it
      // nothing and are refused without counting (docs/security.md).
      const key = generateApiKey('live');
      const outcome = await call(`${gateway.url}/v1/wholesalers`, {
        headers: { 'x-api-key': key },
        timeoutMs: 10_000,
      });
      const status = outcome.ok ? outcome.status : 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (outcome.ok && retryAfterProblem(outcome.status, outcome.headers['retry-after']) !== undefined)
        withoutRetryAfter++;
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
  const limited = statuses.get(429) ?? 0;
  const figures = `300 unknown keys in ${duration(performance.now() - started)}: ${[...statuses].map(([s, n]) => `${n} × ${s || 'no answer'}`).join(', ')}`;
  return row(
    'failed auth throttled',
    figures,
    limited > 0 && withoutRetryAfter === 0,
    'no 429 rate_limited for a client guessing keys',
  );
}

/** A webhook receiver that accepts everything. */
async function startSink(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}` };
}

/** A webhook, a custom wholesaler, an order and a delivery note that exist, so fuzzing reaches past 404. */
async function knownIds(
  url: string,
  keys: { test: string; live: string },
  password: string,
  sinkUrl: string,
  customEndpoint: string,
): Promise<FuzzContext['known']> {
  const json = { 'content-type': 'application/json', 'x-api-key': keys.test };
  const msv3 = { 'x-msv3-username': 'apotheke1', 'x-msv3-password': password };
  const webhook = jsonOf(
    await call(`${url}/v1/webhooks`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        url: sinkUrl,
        wholesaler: 'phoenix',
        events: ['order.status_changed', 'delivery.received'],
      }),
    }),
  );
  const custom = jsonOf(
    await call(`${url}/v1/wholesalers/custom`, {
      method: 'POST',
      headers: { ...json, 'x-api-key': keys.live },
      body: JSON.stringify({ name: 'Fuzz Apotheke', endpoint: customEndpoint }),
    }),
  );
  const order = jsonOf(
    await call(`${url}/v1/orders`, {
      method: 'POST',
      headers: { ...json, ...msv3 },
      body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 1 }] }),
    }),
  );
  const deliveries = jsonOf(
    await call(`${url}/v1/deliveries?wholesaler=phoenix`, { headers: { 'x-api-key': keys.test, ...msv3 } }),
  );
  const ids = (value: unknown) => (typeof value === 'string' ? [value] : []);
  return {
    webhooks: ids(webhook?.id),
    custom: ids((custom?.wholesaler as { id?: unknown } | undefined)?.id),
    orders: ids(order?.order_id),
    trackingNumbers: ((deliveries?.deliveries ?? []) as { tracking_number?: string }[]).flatMap((d) =>
      ids(d.tracking_number),
    ),
  };
}
