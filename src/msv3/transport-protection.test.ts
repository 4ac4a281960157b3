import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import {
  answerEnvelope,
  closedPortUrl,
  faultEnvelope,
  type Handler,
  callInput as input,
  SOAP_CONTENT_TYPE,
  testDecode,
  transportTestRig,
  waitFor,
} from './test-support/local-server.js';
import type { BreakerChange } from './transport.js';

const { server, transport } = transportTestRig();

/** A wholesaler that holds every answer until the test releases it. */
async function holdingServer() {
  const held: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const wholesaler = await server((_req, res: ServerResponse, body) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    held.push(() => {
      inFlight--;
      res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE }).end(body);
    });
  });
  return { wholesaler, held, maxInFlight: () => maxInFlight };
}

const answering: Handler = (_req, res) =>
  res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE }).end(answerEnvelope('ok'));

describe('concurrency cap per target', () => {
  it('queues calls beyond the cap in order, refuses beyond the queue, and leaves other targets alone', async () => {
    const { wholesaler, held, maxInFlight } = await holdingServer();
    const other = await server(answering);
    const client = transport({ maxConcurrentPerTarget: 2, maxQueuePerTarget: 1 });
    const calls = [1, 2, 3].map((n) =>
      client.call(input(wholesaler.url, { body: `<m:answer>${n}</m:answer>` }), testDecode),
    );

    const overflow = await client.call(input(wholesaler.url), testDecode);
    expect(overflow).toMatchObject({
      ok: false,
      error: { reason: 'overloaded', cause: 'queue_full', maybeDelivered: false, retryable: true },
    });
    expect(await client.call(input(other.url, { target: 'sanacorp' }), testDecode)).toMatchObject({
      ok: true,
    });

    await waitFor(() => held.length === 2);
    held.shift()!();
    await waitFor(() => held.length === 2);
    expect(wholesaler.requests.map((request) => request.body)).toEqual([
      '<m:answer>1</m:answer>',
      '<m:answer>2</m:answer>',
      '<m:answer>3</m:answer>',
    ]);
    for (const release of held.splice(0)) release();

    expect((await Promise.all(calls)).map((result) => result.ok && result.value)).toEqual(['1', '2', '3']);
    expect(maxInFlight()).toBe(2);
  });

  it("gives a freed slot to another account's waiting call before the holder's next one", async () => {
    const { wholesaler, held } = await holdingServer();
    const client = transport({ maxConcurrentPerTarget: 1, maxQueuePerTarget: 5 });
    const call = (account: string, n: number) =>
      client.call(input(wholesaler.url, { account, body: `<m:answer>${n}</m:answer>` }), testDecode);
    const calls = [call('acct_big', 1)];
    await waitFor(() => held.length === 1);
    calls.push(call('acct_big', 2), call('acct_big', 3), call('acct_small', 4));
    for (let i = 0; i < 4; i++) {
      await waitFor(() => held.length === 1);
      held.shift()!();
    }
    expect((await Promise.all(calls)).every((result) => result.ok)).toBe(true);
    expect(wholesaler.requests.map((request) => request.body)).toEqual([
      '<m:answer>1</m:answer>',
      '<m:answer>4</m:answer>',
      '<m:answer>2</m:answer>',
      '<m:answer>3</m:answer>',
    ]);
  });

  it('gives up on a queued call after the maximum wait', async () => {
    const { wholesaler, held } = await holdingServer();
    const client = transport({ maxConcurrentPerTarget: 1, maxQueuePerTarget: 5, maxQueueWaitMs: 50 });
    const first = client.call(input(wholesaler.url), testDecode);
    const waited = await client.call(input(wholesaler.url), testDecode);
    expect(waited).toMatchObject({
      ok: false,
      error: { reason: 'overloaded', cause: 'wait_timeout', maybeDelivered: false },
    });
    await waitFor(() => held.length === 1);
    held.shift()!();
    expect(await first).toMatchObject({ ok: true });
    expect(wholesaler.requests).toHaveLength(1);
  });
});

describe('targets sharing one origin', () => {
  it('share one budget as large as the pool, so no call waits unseen in the pool', async () => {
    const { wholesaler, held, maxInFlight } = await holdingServer();
    const client = transport({
      connectionsPerOrigin: 2,
      maxConcurrentPerTarget: 2,
      maxQueuePerTarget: 10,
      maxQueueWaitMs: 100,
    });
    const call = (account: string) =>
      client.call(input(wholesaler.url, { target: `custom/${account}/custom-x`, account }), testDecode);
    const first = [call('acct_a'), call('acct_a'), call('acct_b'), call('acct_b')];
    await waitFor(() => held.length === 2);
    expect(client.usage().map(({ target, active, queued }) => ({ target, active, queued }))).toEqual([
      { target: 'custom/acct_a/custom-x', active: 2, queued: 0 },
      { target: 'custom/acct_b/custom-x', active: 0, queued: 2 },
    ]);
    // Both of acct_b's calls waited in the gateway's queue, saw its deadline and were refused there.
    const results = await Promise.all(first.slice(2));
    expect(results).toMatchObject([
      { ok: false, error: { reason: 'overloaded', cause: 'wait_timeout' } },
      { ok: false, error: { reason: 'overloaded', cause: 'wait_timeout' } },
    ]);
    for (const release of held.splice(0)) release();
    expect(await Promise.all(first.slice(0, 2))).toMatchObject([{ ok: true }, { ok: true }]);
    expect(maxInFlight()).toBe(2);
    expect(wholesaler.requests).toHaveLength(2);
  });

  it('share the slots of the origin fairly between accounts', async () => {
    const { wholesaler, held } = await holdingServer();
    // Each target alone could have 4 calls in progress; the origin has 1 connection.
    const client = transport({ connectionsPerOrigin: 1, maxConcurrentPerTarget: 4, maxQueuePerTarget: 5 });
    const call = (account: string, n: number) =>
      client.call(
        input(wholesaler.url, {
          target: `custom/${account}/custom-x`,
          account,
          body: `<m:answer>${n}</m:answer>`,
        }),
        testDecode,
      );
    const calls = [call('acct_a', 1)];
    await waitFor(() => held.length === 1);
    calls.push(call('acct_a', 2), call('acct_a', 3), call('acct_b', 4));
    for (let i = 0; i < 4; i++) {
      await waitFor(() => held.length === 1);
      held.shift()!();
    }
    expect((await Promise.all(calls)).every((result) => result.ok)).toBe(true);
    expect(wholesaler.requests.map((request) => request.body)).toEqual([
      '<m:answer>1</m:answer>',
      '<m:answer>4</m:answer>',
      '<m:answer>2</m:answer>',
      '<m:answer>3</m:answer>',
    ]);
  });
});

describe('circuit breaker through the transport', () => {
  function observed() {
    const clock = manualClock();
    const changes: BreakerChange[] = [];
    return {
      clock,
      changes,
      deps: { clock, onBreakerChange: (change: BreakerChange) => changes.push(change) },
    };
  }

  it('opens after consecutive connection failures, fails fast, then closes after a successful trial', async () => {
    const { clock, changes, deps } = observed();
    const closed = await closedPortUrl();
    const live = await server(answering);
    const client = transport({ breakerFailureThreshold: 2, breakerCoolDownMs: 30_000 }, deps);

    expect(await client.call(input(closed), testDecode)).toMatchObject({ error: { reason: 'unreachable' } });
    expect(client.breakerState('phoenix')).toEqual({
      state: 'closed',
      consecutiveFailures: 1,
      retryAfterMs: 0,
    });
    expect(await client.call(input(closed), testDecode)).toMatchObject({ error: { reason: 'unreachable' } });
    expect(changes).toEqual([
      {
        target: 'phoenix',
        from: 'closed',
        to: 'open',
        at: clock.now(),
        lastError: expect.objectContaining({ reason: 'unreachable', code: 'ECONNREFUSED' }),
      },
    ]);

    expect(await client.call(input(live.url), testDecode)).toMatchObject({
      ok: false,
      error: { reason: 'circuit_open', retryAfterMs: 30_000, maybeDelivered: false, retryable: true },
    });
    clock.advance(10_000);
    expect(await client.call(input(live.url), testDecode)).toMatchObject({
      error: { reason: 'circuit_open', retryAfterMs: 20_000 },
    });
    expect(live.requests).toHaveLength(0);
    expect(await client.call(input(closed, { target: 'sanacorp' }), testDecode)).toMatchObject({
      error: { reason: 'unreachable' },
    });

    clock.advance(20_000);
    expect(await client.call(input(live.url), testDecode)).toMatchObject({ ok: true });
    expect(changes.map(({ from, to }) => `${from}->${to}`)).toEqual([
      'closed->open',
      'open->half_open',
      'half_open->closed',
    ]);
    expect(client.breakerState('phoenix')).toEqual({
      state: 'closed',
      consecutiveFailures: 0,
      retryAfterMs: 0,
    });
  });

  it('re-opens for a new cool-down when the half-open trial fails', async () => {
    const { clock, changes, deps } = observed();
    const closed = await closedPortUrl();
    const client = transport({ breakerFailureThreshold: 1, breakerCoolDownMs: 5_000 }, deps);

    await client.call(input(closed), testDecode);
    clock.advance(5_000);
    expect(await client.call(input(closed), testDecode)).toMatchObject({ error: { reason: 'unreachable' } });
    expect(changes.map(({ from, to }) => `${from}->${to}`)).toEqual([
      'closed->open',
      'open->half_open',
      'half_open->open',
    ]);
    expect(await client.call(input(closed), testDecode)).toMatchObject({
      error: { reason: 'circuit_open', retryAfterMs: 5_000 },
    });
  });

  it('lets only the trial through while half-open', async () => {
    const { clock, deps } = observed();
    const closed = await closedPortUrl();
    const { wholesaler, held } = await holdingServer();
    const client = transport({ breakerFailureThreshold: 1, breakerCoolDownMs: 5_000 }, deps);
    await client.call(input(closed), testDecode);
    clock.advance(5_000);

    const trial = client.call(input(wholesaler.url), testDecode);
    await waitFor(() => held.length === 1);
    const second = await client.call(input(wholesaler.url), testDecode);
    expect(second).toMatchObject({ ok: false, error: { reason: 'circuit_open' } });
    if (second.ok || second.error.reason !== 'circuit_open') throw new Error('expected circuit_open');
    expect(second.error.retryAfterMs).toBeGreaterThan(0);
    expect(second.error.retryAfterMs).toBeLessThanOrEqual(1_000);

    held.shift()!();
    expect(await trial).toMatchObject({ ok: true });
    expect(client.breakerState('phoenix').state).toBe('closed');
    expect(wholesaler.requests).toHaveLength(1);
  });

  it('does not count answers (401, SOAP fault, 404) but does count a gateway 503', async () => {
    const statuses = new Map<string, Handler>([
      ['/401', (_req, res) => res.writeHead(401, { 'www-authenticate': 'Basic realm="MSV3"' }).end()],
      [
        '/fault',
        (_req, res) =>
          res
            .writeHead(500, { 'content-type': SOAP_CONTENT_TYPE })
            .end(faultEnvelope('ServerFaultInfo', 'kaputt')),
      ],
      ['/404', (_req, res) => res.writeHead(404).end('not found')],
      ['/503', (_req, res) => res.writeHead(503, { 'content-type': 'text/html' }).end('<html>down</html>')],
    ]);
    const wholesaler = await server((req, res, body) => statuses.get(req.url ?? '')?.(req, res, body));
    const base = wholesaler.url.replace(/\/msv3.*$/, '');
    const client = transport({ breakerFailureThreshold: 1 });

    for (const path of ['/401', '/fault', '/404']) {
      expect((await client.call(input(`${base}${path}`), testDecode)).ok).toBe(false);
      expect(client.breakerState('phoenix').state).toBe('closed');
    }
    await client.call(input(`${base}/503`), testDecode);
    expect(client.breakerState('phoenix').state).toBe('open');
  });
});
