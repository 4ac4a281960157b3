import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { probeRequest } from './probe-request.js';
import {
  callInput as input,
  SOAP_CONTENT_TYPE,
  testDecode,
  transportTestRig,
  waitFor,
} from './test-support/local-server.js';

/**
 * The transport's `stop` signal (the gateway's shutdown, docs/resilience.md "Shutdown"): calls in flight
 * end at once with a `shutdown` error that tells whether the request had been sent, so the caller can
 * still answer its client (an order becomes `order_outcome_unknown`, not a released key).
 */

const { server, transport } = transportTestRig();

/** A wholesaler that never answers (until the test ends). */
async function silentServer() {
  const held: ServerResponse[] = [];
  const wholesaler = await server((_req, res) => {
    held.push(res);
  });
  return { wholesaler, held };
}

describe('stopping calls on shutdown', () => {
  it('ends a call whose request was sent as a shutdown error that may have been delivered', async () => {
    const { wholesaler, held } = await silentServer();
    const stop = new AbortController();
    const client = transport({ breakerFailureThreshold: 1 }, { stop: stop.signal });
    const call = client.call(input(wholesaler.url), testDecode);
    await waitFor(() => held.length === 1);
    stop.abort();
    expect(await call).toMatchObject({
      ok: false,
      error: { reason: 'shutdown', maybeDelivered: true, retryable: true, operation: 'bestellen' },
    });
    // Our own shutdown says nothing about the wholesaler: even at a threshold of 1 the circuit stays closed.
    expect(client.breakerState('phoenix')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('ends a call still waiting for a connection slot, and refuses later calls, as not sent', async () => {
    const { wholesaler, held } = await silentServer();
    const stop = new AbortController();
    const client = transport({ maxConcurrentPerTarget: 1, maxQueuePerTarget: 5 }, { stop: stop.signal });
    const first = client.call(input(wholesaler.url), testDecode);
    await waitFor(() => held.length === 1);
    const queued = client.call(input(wholesaler.url), testDecode);
    stop.abort();
    expect(await queued).toMatchObject({ ok: false, error: { reason: 'shutdown', maybeDelivered: false } });
    expect(await first).toMatchObject({ ok: false, error: { reason: 'shutdown', maybeDelivered: true } });
    expect(await client.call(input(wholesaler.url), testDecode)).toMatchObject({
      ok: false,
      error: { reason: 'shutdown', maybeDelivered: false },
    });
    expect(wholesaler.requests).toHaveLength(1);
  });

  it("still rejects with the caller's own reason when the caller gives up while waiting", async () => {
    const { wholesaler, held } = await silentServer();
    const stop = new AbortController();
    const client = transport({ maxConcurrentPerTarget: 1 }, { stop: stop.signal });
    const first = client.call(input(wholesaler.url), testDecode);
    await waitFor(() => held.length === 1);
    const caller = new AbortController();
    const queued = client.call(input(wholesaler.url, { signal: caller.signal }), testDecode);
    caller.abort(new Error('client went away'));
    await expect(queued).rejects.toThrow('client went away');
    held[0]!.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE }).end('<m:answer>ok</m:answer>');
    expect(await first).toMatchObject({ ok: true, value: 'ok' });
  });

  it('takes many calls in flight without a listener-leak warning', async () => {
    const { wholesaler, held } = await silentServer();
    const stop = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const client = transport({}, { stop: stop.signal });
      const calls = Array.from({ length: 12 }, () => client.call(input(wholesaler.url), testDecode));
      await waitFor(() => held.length === 12);
      stop.abort();
      const results = await Promise.all(calls);
      expect(results.every((r) => !r.ok && r.error.reason === 'shutdown')).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('ends a probe in flight', async () => {
    const { wholesaler, held } = await silentServer();
    const stop = new AbortController();
    const probe = transport({}, { stop: stop.signal }).probe({
      target: 'phoenix',
      url: wholesaler.url,
      request: probeRequest(2, 'msv3-gateway test'),
    });
    await waitFor(() => held.length === 1);
    stop.abort();
    expect(await probe).toMatchObject({ up: false, error: { reason: 'shutdown' } });
  });
});
