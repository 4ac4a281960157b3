import type { IncomingMessage } from 'node:http';
import { type Dispatcher, errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { until } from '../../test/until.js';
import {
  closedPortUrl,
  type Handler,
  callInput as input,
  SOAP_CONTENT_TYPE,
  testDecode,
  transportTestRig,
} from './test-support/local-server.js';
import { transportFailureToError } from './transport-outcome.js';

const { server, transport } = transportTestRig();

/** A handler that keeps every request unanswered; `received` resolves with the first request's body. */
function silent() {
  let markReceived: (body: string) => void = () => {};
  const received = new Promise<string>((resolve) => {
    markReceived = resolve;
  });
  const handler: Handler = (_req, _res, body) => markReceived(body);
  return { handler, received };
}

describe('connection failures', () => {
  it('reports a refused connection as unreachable and certainly not delivered', async () => {
    const result = await transport().call(input(await closedPortUrl()), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'unreachable', code: 'ECONNREFUSED', maybeDelivered: false, retryable: true },
    });
  });

  it('reports a connection dropped after the request arrived as unreachable that may have been delivered', async () => {
    const wholesaler = await server((req: IncomingMessage) => req.socket.destroy());
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({ ok: false, error: { reason: 'unreachable', maybeDelivered: true } });
    expect(wholesaler.requests).toHaveLength(1);
  });

  it('maps undici connect timeouts and happy-eyeballs aggregate errors', () => {
    const context = { target: 'phoenix', operation: 'bestellen' };
    const timeouts = { connectTimeoutMs: 111, headersTimeoutMs: 222, bodyTimeoutMs: 333 };
    expect(transportFailureToError(new errors.ConnectTimeoutError(), false, context, timeouts)).toMatchObject(
      {
        reason: 'timeout',
        phase: 'connect',
        timeoutMs: 111,
        maybeDelivered: false,
        retryable: true,
      },
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' });
    expect(transportFailureToError(new AggregateError([refused]), false, context, timeouts)).toMatchObject({
      reason: 'unreachable',
      code: 'ECONNREFUSED',
    });
  });
});

describe('timeouts', () => {
  it('reports missing response headers after the full body was sent as a timeout that may have been delivered', async () => {
    const { handler, received } = silent();
    const wholesaler = await server(handler);
    const call = input(wholesaler.url);
    const result = await transport({ headersTimeoutMs: 150 }).call(call, testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'timeout', phase: 'headers', timeoutMs: 150, maybeDelivered: true, retryable: true },
    });
    expect(await received).toBe(call.body);
  });

  it('reports a stalled response body as a body timeout', async () => {
    const wholesaler = await server((_req, res) => {
      res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE });
      res.write('<env:Envelope');
    });
    const result = await transport({ bodyTimeoutMs: 150 }).call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'timeout', phase: 'body', timeoutMs: 150, maybeDelivered: true },
    });
  });

  it('ends the call at the overall deadline even when no single timeout fired', async () => {
    const { handler } = silent();
    const wholesaler = await server(handler);
    const result = await transport({ totalTimeoutMs: 150 }).call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'timeout', phase: 'total', timeoutMs: 150, maybeDelivered: true },
    });
    expect(result.latencyMs).toBeLessThan(4_000);
  });

  it('reports a deadline hit before the request got a connection as certainly not delivered, and never sends it', async () => {
    let captured: Dispatcher.DispatchHandler | undefined;
    // A dispatcher that never gets a connection until told to.
    const stuck = {
      dispatch: (_options: unknown, handler: Dispatcher.DispatchHandler) => {
        captured = handler;
        return false;
      },
      close: async () => {},
    } as unknown as Dispatcher;
    const client = transport({ totalTimeoutMs: 50, dispatcherFactory: () => stuck });

    const result = await client.call(input('http://wholesaler.invalid/msv3'), testDecode);

    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'timeout', phase: 'total', maybeDelivered: false },
    });
    let abortedWith: Error | undefined;
    captured?.onConnect?.((error) => {
      abortedWith = error;
    });
    expect(abortedWith).toBeInstanceOf(Error);
  });
});

describe('response size cap', () => {
  it('abandons a streamed answer larger than the cap without reading all of it', async () => {
    const total = 64 * 1024 * 1024;
    let written = 0;
    let serverClosed: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      serverClosed = resolve;
    });
    const wholesaler = await server((_req, res) => {
      res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE });
      res.on('close', serverClosed);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });

    const result = await transport({ maxResponseBytes: 256 * 1024 }).call(input(wholesaler.url), testDecode);

    expect(result).toMatchObject({
      ok: false,
      error: {
        reason: 'too_large',
        status: 200,
        limitBytes: 256 * 1024,
        retryable: false,
        maybeDelivered: true,
      },
    });
    await closed;
    expect(written).toBeLessThan(total);
  });

  it('refuses an answer whose Content-Length already exceeds the cap', async () => {
    const wholesaler = await server((_req, res) => {
      res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE, 'content-length': 10_000_000 });
      res.write('<env:Envelope>');
    });
    const client = transport({ maxResponseBytes: 64 * 1024, bodyTimeoutMs: 4_000 });
    const result = await client.call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({ ok: false, error: { reason: 'too_large', status: 200 } });
  });
});

describe('caller abort', () => {
  it('rejects with the signal reason and never sends a request that was still waiting for a connection', async () => {
    const { handler, received } = silent();
    let answerFirst: () => void = () => {};
    const wholesaler = await server((req, res, body) => {
      if (body.includes('first')) {
        answerFirst = () => res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE }).end(body);
        handler(req, res, body);
      } else {
        res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE }).end(body);
      }
    });
    const client = transport({ connectionsPerOrigin: 1 });
    const first = client.call(input(wholesaler.url, { body: '<m:answer>first</m:answer>' }), testDecode);
    await received;

    const controller = new AbortController();
    const second = client.call(
      input(wholesaler.url, { body: '<m:answer>second</m:answer>', signal: controller.signal }),
      testDecode,
    );
    await until(
      'the second call waiting for the connection',
      () => client.usage()[0]?.queued === 1,
      2_000,
      5,
    );
    controller.abort(new Error('client went away'));
    await expect(second).rejects.toThrow('client went away');

    answerFirst();
    expect(await first).toMatchObject({ ok: true, value: 'first' });
    expect(
      await client.call(input(wholesaler.url, { body: '<m:answer>third</m:answer>' }), testDecode),
    ).toMatchObject({
      ok: true,
      value: 'third',
    });
    expect(wholesaler.requests.map((request) => request.body)).toEqual([
      '<m:answer>first</m:answer>',
      '<m:answer>third</m:answer>',
    ]);
    expect(client.breakerState('phoenix')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('rejects at once when the signal is already aborted', async () => {
    const wholesaler = await server(() => {});
    const signal = AbortSignal.abort(new Error('too late'));
    await expect(transport().call(input(wholesaler.url, { signal }), testDecode)).rejects.toThrow('too late');
    expect(wholesaler.connectionCount()).toBe(0);
  });
});

describe('address policy', () => {
  const policyFor = (allowsAddress: (address: string) => boolean) => ({
    allowsAddress,
    refusesHostName: () => false,
  });
  const noLoopback = policyFor((address) => !address.startsWith('127.') && address !== '::1');

  it('refuses a loopback IP literal before connecting', async () => {
    const wholesaler = await server(() => {});
    const seen: string[] = [];
    const policy = policyFor((address) => {
      seen.push(address);
      return noLoopback.allowsAddress(address);
    });
    const client = transport({ addressPolicy: policy, breakerFailureThreshold: 1 });
    const result = await client.call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'unreachable', code: 'ADDRESS_NOT_ALLOWED', maybeDelivered: false, retryable: false },
    });
    if (result.ok || result.error.reason !== 'unreachable') throw new Error('expected unreachable');
    expect(result.error.detail).toContain('127.0.0.1');
    expect(seen).toEqual(['127.0.0.1']);
    expect(wholesaler.connectionCount()).toBe(0);
    expect(client.breakerState('phoenix').state).toBe('closed');
  });

  it('checks the addresses a host name resolves to, and connects to an allowed one', async () => {
    const wholesaler = await server((_req, res) => res.writeHead(200).end('<m:answer>ok</m:answer>'));
    const viaName = input(wholesaler.url.replace('127.0.0.1', 'localhost'));

    const refused = await transport({ addressPolicy: noLoopback }).call(viaName, testDecode);
    expect(refused).toMatchObject({
      ok: false,
      error: { reason: 'unreachable', code: 'ADDRESS_NOT_ALLOWED' },
    });
    expect(wholesaler.connectionCount()).toBe(0);

    const onlyV4Loopback = policyFor((address) => address === '127.0.0.1');
    const allowed = await transport({ addressPolicy: onlyV4Loopback }).call(viaName, testDecode);
    expect(allowed).toMatchObject({ ok: true, value: 'ok' });
  });

  it('names the host, never the address it resolved to, when refusing', async () => {
    const wholesaler = await server(() => {});
    const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const viaName = input(wholesaler.url.replace('127.0.0.1', 'wholesaler.example'));
    const refused = await transport({ addressPolicy: noLoopback, lookup }).call(viaName, testDecode);
    if (refused.ok || refused.error.reason !== 'unreachable') throw new Error('expected unreachable');
    expect(refused.error).toMatchObject({ code: 'ADDRESS_NOT_ALLOWED' });
    expect(refused.error.detail).toContain('wholesaler.example');
    expect(refused.error.detail).not.toContain('127.0.0.1');
    expect(wholesaler.connectionCount()).toBe(0);
  });
});
