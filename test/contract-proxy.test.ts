import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, startSandboxGatewayProcess } from './gateway-process.js';
import { type OpenApiChecker, openApiChecker } from './openapi-conformance.js';
import { readTour, runTourWithFetch, type TourRun } from './readme-tour.js';
import { until } from './until.js';

/**
 * The OpenAPI document against what the gateway does, judged by a third party: the README's tour runs
 * through a contract proxy (@stoplight/prism-cli `proxy --errors`) in front of a real gateway process.
 * The proxy checks every request and answer against the document and turns anything it flags into a
 * 422 or 500 `application/problem+json` with `sl-violations`; the tour must pass with nothing flagged.
 * What the proxy cannot judge is checked with Ajv against the same document (test/openapi-conformance.ts):
 * the answers to requests it refuses itself (sent to the gateway directly), and the webhook payloads of
 * the document's 3.1 `webhooks`, as a subscription receives them.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PRISM = join(ROOT, 'node_modules/@stoplight/prism-cli/dist/index.js');

interface Delivered {
  type: string;
  body: unknown;
}

describe('the README tour through a contract proxy (prism proxy --errors) in front of a real gateway', () => {
  const children: ChildProcess[] = [];
  let folder: string;
  let gatewayUrl: string;
  let proxyUrl: string;
  let key: string;
  let checker: OpenApiChecker;
  let receiver: Server;
  const delivered: Delivered[] = [];
  let tour: TourRun;
  let proxyOutput = '';

  const call = (base: string, method: string, path: string, body?: unknown, headers = {}) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        'x-api-key': key,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-contract-proxy-'));
    receiver = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', () => {
        const body = JSON.parse(text) as { type: string };
        delivered.push({ type: body.type, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const started = await startSandboxGatewayProcess(folder, children, {
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '200',
      // The tour, the subscription and the checks below within a second or two: more than a person sends.
      RATE_LIMIT_TEST_POINTS: '1000',
    });
    gatewayUrl = started.gateway.url;
    key = started.key;
    const document = await (await fetch(`${gatewayUrl}/v1/openapi.json`)).json();
    checker = openApiChecker(document);
    writeFileSync(join(folder, 'openapi.json'), JSON.stringify(document));

    const port = await freePort();
    const proxy = spawn(
      process.execPath,
      [PRISM, 'proxy', '--errors', '-h', '127.0.0.1', '-p', String(port), 'openapi.json', gatewayUrl],
      { cwd: folder, env: { PATH: process.env.PATH, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(proxy);
    proxy.stdout?.on('data', (chunk: Buffer) => {
      proxyOutput += chunk.toString();
    });
    proxy.stderr?.on('data', (chunk: Buffer) => {
      proxyOutput += chunk.toString();
    });
    await until(
      'prism listening',
      () => (proxyOutput.includes('Prism is listening') ? true : undefined),
      30_000,
    );
    proxyUrl = `http://127.0.0.1:${port}`;

    // A subscription to everything, made through the proxy too, so the payloads can be checked below.
    const subscribed = await call(proxyUrl, 'POST', '/v1/webhooks', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      wholesaler: '*',
      events: ['*'],
    });
    expect(subscribed.status, await subscribed.clone().text()).toBe(201);
    const { id } = (await subscribed.json()) as { id: string };
    expect((await call(proxyUrl, 'POST', `/v1/webhooks/${id}/test`)).status).toBe(200);

    tour = await runTourWithFetch(readTour(README), proxyUrl, key);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map(killAndWait));
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    rmSync(folder, { recursive: true, force: true });
  });

  it('runs every step of the tour with nothing flagged', () => {
    expect(tour.exchanges.length).toBeGreaterThan(10);
    for (const exchange of tour.exchanges) {
      const at = `${exchange.request.method} ${exchange.request.url}`;
      expect(exchange.headers.get('sl-violations'), `${at}\n${proxyOutput.slice(-2000)}`).toBeNull();
      expect(exchange.headers.get('content-type'), at).not.toMatch(/problem\+json/);
      expect(exchange.status, `${at}: ${exchange.body}`).toBe(200);
    }
    expect(tour.listens.map((listen) => listen.code)).toEqual([0]);
  });

  it('finds, with Ajv too, every answer of the tour as the document describes it', () => {
    const problems = tour.exchanges.flatMap((exchange) =>
      checker.answer({
        method: exchange.request.method,
        path: exchange.request.url.slice('http://127.0.0.1:8080'.length),
        status: exchange.status,
        headers: exchange.headers,
        body: exchange.body.toString('utf8'),
      }),
    );
    expect(problems).toEqual([]);
  });

  it('passes an error the gateway answers for a valid request (a PZN with a wrong check digit) unflagged', async () => {
    const response = await call(
      proxyUrl,
      'POST',
      '/v1/orders',
      { wholesaler: 'phoenix', items: [{ pzn: '04114917', quantity: 1 }] },
      { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'geheim' },
    );
    expect(response.headers.get('sl-violations')).toBeNull();
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request', param: 'items[0].pzn' });
  });

  it('answers what the proxy refuses itself as the document says (checked with Ajv, at the gateway)', async () => {
    const login = { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'geheim' };
    const malformed: [string, string, unknown, Record<string, string>, number, string][] = [
      [
        'POST',
        '/v1/availability',
        { wholesaler: 'phoenix', items: [{ pzn: '4114918', quantity: 1 }] },
        {},
        400,
        'wholesaler_credentials_missing',
      ],
      [
        'POST',
        '/v1/orders',
        { wholesaler: 'phoenix', items: [{ pzn: 'abc', quantity: 1 }] },
        login,
        400,
        'invalid_request',
      ],
      ['GET', '/v1/events?limit=0', undefined, {}, 400, 'invalid_request'],
      [
        'GET',
        '/v1/deliveries/history?wholesaler=phoenix&limit=500',
        undefined,
        login,
        400,
        'invalid_request',
      ],
      [
        'POST',
        '/v1/webhooks',
        { url: 'https://x.example/h', wholesaler: 'phoenix', events: ['order.shipped'] },
        {},
        400,
        'invalid_request',
      ],
      ['GET', '/v1/wholesalers', undefined, { 'x-api-key': '' }, 401, 'api_key_missing'],
    ];
    const problems: string[] = [];
    for (const [method, path, body, headers, status, kind] of malformed) {
      // The proxy answers each of these itself (422, or 401 for the missing key), so it never judges ours.
      const proxied = await call(proxyUrl, method, path, body, headers);
      expect(proxied.headers.get('content-type'), `${method} ${path} through the proxy`).toMatch(
        /problem\+json/,
      );
      const response = await call(gatewayUrl, method, path, body, headers);
      const text = await response.text();
      expect(response.status, `${method} ${path}: ${text}`).toBe(status);
      expect(JSON.parse(text).error, `${method} ${path}`).toBe(kind);
      problems.push(...checker.answer({ method, path, status, headers: response.headers, body: text }));
    }
    expect(problems).toEqual([]);
  });

  it('delivers every webhook payload as the document’s webhooks describe it (checked with Ajv)', async () => {
    // The tour raised an order status change and a delivery with shortages; the test ping came first.
    const types = ['ping', 'order.status_changed', 'delivery.received', 'delivery.shortage'];
    await until(
      'the webhook deliveries',
      () => (types.every((type) => delivered.some((d) => d.type === type)) ? true : undefined),
      20_000,
    );
    const feed = JSON.parse(tour.files.get('.scratch/tour/events.json')!.toString('utf8'))
      .events as unknown[];
    const problems = [...delivered.map((d) => d.body), ...feed].flatMap((body) => checker.webhook(body));
    expect(problems).toEqual([]);
  });

  it('is a checker that can fail: a broken answer and a broken payload are found', () => {
    const headers = new Headers({ 'content-type': 'application/json; charset=utf-8' });
    const problems = checker.answer({
      method: 'GET',
      path: '/v1/health',
      status: 200,
      headers,
      body: '{"status":"fine"}',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'GET /v1/health → 200: no X-Request-Id header',
        expect.stringContaining('must have required property'),
        expect.stringContaining('/status must be equal to one of the allowed values'),
      ]),
    );
    expect(checker.webhook({ type: 'delivery.received', id: 'evt_1' }).length).toBeGreaterThan(0);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
