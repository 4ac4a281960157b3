import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { createLogger } from '../src/observability/logger.js';
import { startTracing } from '../src/observability/start-tracing.js';
import type { Tracing } from '../src/observability/tracing.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { type Gateway, startGateway } from './gateway.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.js';
import { until } from './until.js';

/**
 * Tracing end to end (docs/tracing.md): the real app and transports against the real mock wholesalers,
 * spans exported by the real OTLP/HTTP exporter to a collector on loopback, checked as it received them.
 */

const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;
const PULMOLAN = '04114918';
/** A caller's W3C trace context: its trace and its own span, sampled. */
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

describe('tracing to an OTLP/HTTP collector', () => {
  let receiver: OtlpReceiver;
  let database: TestDatabase;
  let tracing: Tracing;
  let gw: Gateway;
  const logLines: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    database = await createTestDatabase('sqlite');
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'gateway-under-test',
    });
    const logger = createLogger({ level: 'info', destination: { write: (line) => logLines.push(line) } });
    tracing = await startTracing(config.tracing, { logger, version: 'test' });
    gw = await startGateway({ database, tracing, logger });
  });

  afterAll(async () => {
    await gw?.close();
    await tracing?.close();
    await database?.dispose();
    await receiver?.close();
  });

  /** Flushes until `predicate` holds: a server span ends just after its answer has left. */
  function exported(predicate: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
    return until(
      'the spans exported',
      async () => {
        await tracing.flush();
        const spans = receiver.spans();
        return predicate(spans) && spans;
      },
      15_000,
      50,
    ).catch((error: unknown) => {
      throw new Error(
        `${(error as Error).message}; got ${receiver
          .spans()
          .map((s) => s.name)
          .join(', ')}`,
      );
    });
  }

  function serverSpanOf(spans: ReceivedSpan[], requestId: string | null): ReceivedSpan | undefined {
    return spans.find((span) => span.kind === SERVER && span.attributes['gateway.request_id'] === requestId);
  }

  it("continues the caller's traceparent: a server span per request and a child span per SOAP call", async () => {
    const response = await gw.fetch({
      url: '/v1/availability',
      body: { wholesaler: 'phoenix', items: [{ pzn: PULMOLAN, quantity: 3 }] },
      headers: { traceparent: TRACEPARENT },
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    const traceResponse = response.headers.get('traceresponse') ?? '';
    expect(traceResponse).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    const serverSpanId = traceResponse.split('-')[2];

    const spans = await exported((all) => all.some((span) => span.spanId === serverSpanId));
    const server = spans.find((span) => span.spanId === serverSpanId);
    expect(server).toMatchObject({
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      name: 'POST /v1/availability',
      kind: SERVER,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/availability',
        'url.path': '/v1/availability',
        'http.response.status_code': 200,
        'gateway.request_id': requestId,
        'gateway.account_id': gw.keys.test.accountId,
        'gateway.key_mode': 'test',
      },
      resource: { 'service.name': 'gateway-under-test', 'service.version': 'test' },
    });
    expect(server?.statusCode).not.toBe(STATUS_ERROR);
    const calls = spans.filter((span) => span.parentSpanId === serverSpanId);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      traceId: CALLER_TRACE,
      name: 'msv3 verfuegbarkeitAnfragen',
      kind: CLIENT,
      attributes: {
        'msv3.wholesaler': 'phoenix',
        'msv3.route': 'sandbox',
        'msv3.operation': 'verfuegbarkeitAnfragen',
        'msv3.version': 2,
        'msv3.outcome': 'ok',
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
      },
    });
    expect(calls[0]?.attributes['msv3.duration_ms']).toBeGreaterThan(0);

    // The request's log line carries the trace id.
    const logged = logLines
      .map((line) => JSON.parse(line) as { msg?: string; request_id?: string; trace_id?: string })
      .find((line) => line.msg === 'request completed' && line.request_id === requestId);
    expect(logged?.trace_id).toBe(CALLER_TRACE);
  });

  it('starts a new trace without a traceparent and records the path without its query string', async () => {
    const response = await gw.fetch({ url: '/v1/deliveries', query: { wholesaler: 'phoenix' } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    const spans = await exported((all) => serverSpanOf(all, requestId) !== undefined);
    const server = serverSpanOf(spans, requestId);
    expect(server).toMatchObject({
      parentSpanId: '',
      name: 'GET /v1/deliveries',
      attributes: { 'http.route': '/v1/deliveries', 'url.path': '/v1/deliveries' },
    });
    expect(server?.traceId).not.toBe(CALLER_TRACE);
    expect(response.headers.get('traceresponse')).toBe(`00-${server?.traceId}-${server?.spanId}-01`);
    const calls = spans.filter((span) => span.parentSpanId === server?.spanId);
    expect(calls.map((span) => span.name)).toEqual(['msv3 lieferavisAbfrageNeu']);
  });

  it('records the MSV3 fault of a SOAP fault on the call span and the error kind on the request span', async () => {
    const response = await gw.fetch({
      url: '/v1/availability',
      body: { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.SERVER_FAULT.pzn, quantity: 1 }] },
    });
    const body = (await response.json()) as { error: string };
    expect(response.status).toBeGreaterThanOrEqual(500);
    const requestId = response.headers.get('x-request-id');
    const spans = await exported((all) => serverSpanOf(all, requestId) !== undefined);
    const server = serverSpanOf(spans, requestId);
    expect(server).toMatchObject({
      statusCode: STATUS_ERROR,
      attributes: {
        'http.response.status_code': response.status,
        'gateway.error': body.error,
        'error.type': body.error,
      },
    });
    const call = spans.find((span) => span.parentSpanId === server?.spanId);
    expect(call).toMatchObject({
      name: 'msv3 verfuegbarkeitAnfragen',
      statusCode: STATUS_ERROR,
      attributes: {
        'msv3.outcome': 'soap_fault',
        'error.type': 'soap_fault',
        'msv3.fault_kind': 'ServerFault',
        'msv3.fault_code': 'S001',
        'http.response.status_code': 500,
      },
    });
  });

  it('traces a request refused before its API key was checked', async () => {
    const response = await gw.fetch({ url: '/v1/wholesalers', key: null });
    expect(response.status).toBe(401);
    const requestId = response.headers.get('x-request-id');
    const spans = await exported((all) => serverSpanOf(all, requestId) !== undefined);
    const server = serverSpanOf(spans, requestId);
    expect(server).toMatchObject({
      name: 'GET /v1/wholesalers',
      attributes: { 'http.response.status_code': 401, 'gateway.error': 'api_key_missing' },
    });
    expect(server?.attributes).not.toHaveProperty('gateway.account_id');
    // A client error is the caller's, not a failed span (OpenTelemetry's rule for server spans).
    expect(server?.statusCode).not.toBe(STATUS_ERROR);
  });

  it('exports no API key, MSV3 user name or password and nothing of the body', async () => {
    const secrets = {
      username: 'kunde4711zugang',
      password: 'Pw-9f8e7d6c-geheim',
      body: 'body-secret-5b2c1a',
    };
    const credentials = { username: secrets.username, password: secrets.password };
    const item = { pzn: PULMOLAN, quantity: 1 };
    const answers = await Promise.all([
      gw.fetch({ url: '/v1/orders', body: { wholesaler: 'phoenix', items: [item] }, credentials }),
      gw.fetch({ url: '/v1/availability', body: { wholesaler: 'phoenix', items: [item] }, credentials }),
      // The same with a secret in the body (and the query): refused, and still traced.
      gw.fetch({
        url: '/v1/orders',
        body: { wholesaler: 'phoenix', items: [item], password: secrets.body },
        credentials,
      }),
      gw.fetch({
        url: '/v1/availability',
        query: { api_key: secrets.body },
        body: { wholesaler: 'phoenix', items: [{ ...item, note: secrets.body }] },
        credentials,
      }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 400, 400]);
    const requestIds = answers.map((answer) => answer.headers.get('x-request-id'));
    const spans = await exported((all) => requestIds.every((id) => serverSpanOf(all, id) !== undefined));
    const callsOf = (requestId: string | null) =>
      spans.filter((span) => span.parentSpanId === serverSpanOf(spans, requestId)?.spanId).map((s) => s.name);
    expect(callsOf(requestIds[0]!)).toContain('msv3 bestellen');
    expect(callsOf(requestIds[1]!)).toEqual(['msv3 verfuegbarkeitAnfragen']);

    const everythingExported = JSON.stringify(receiver.exports);
    const basic = Buffer.from(`${secrets.username}:${secrets.password}`).toString('base64');
    for (const secret of [gw.keys.test.secret, secrets.username, secrets.password, secrets.body, basic]) {
      expect(everythingExported).not.toContain(secret);
    }
  });
});
