import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy, type HostLookup } from '../../lib/address-policy.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import { createWebhookHttpClient, type WebhookHttpClientOptions } from './http-client.js';

const request = (url: string, live = false) => ({
  url,
  headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
  body: '{"id":"evt_1"}',
  live,
});

describe('webhook HTTP client', () => {
  let receiver: Receiver;
  let other: Receiver;
  const clients: { close(): Promise<void> }[] = [];
  const client = (options: Partial<WebhookHttpClientOptions> & { allowPrivate?: boolean } = {}) => {
    const { allowPrivate = true, ...rest } = options;
    const created = createWebhookHttpClient({
      timeoutMs: 2_000,
      connectTimeoutMs: 1_000,
      addressPolicy: createAddressPolicy({ allowPrivateEndpoints: allowPrivate }),
      connectionsPerOrigin: 4,
      ...rest,
    });
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    other = await startReceiver();
  });
  afterEach(() => receiver.answer(() => ({ status: 200 })));
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await receiver.close();
    await other.close();
  });

  it('POSTs the body and headers and reports a 2xx as success', async () => {
    const result = await client().send(request(receiver.url));
    expect(result).toMatchObject({ ok: true, status: 200 });
    const last = receiver.requests.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', path: '/hooks', body: '{"id":"evt_1"}' });
    expect(last.headers['webhook-id']).toBe('evt_1');
  });

  it('refuses loopback receivers unless private endpoints are allowed, and sends nothing', async () => {
    const before = receiver.requests.length;
    const result = await client({ allowPrivate: false }).send(request(receiver.url));
    expect(result).toMatchObject({ ok: false, failure: 'blocked' });
    expect(receiver.requests.length).toBe(before);
  });

  it('refuses a host name that resolves to 127.0.0.1 at delivery time (DNS rebinding), not naming the address', async () => {
    const rebinding: HostLookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const before = receiver.requests.length;
    const url = `http://receiver.example:${receiver.port}/hooks`;
    const result = await client({ allowPrivate: false, lookup: rebinding }).send(request(url));
    expect(result).toMatchObject({ ok: false, failure: 'blocked' });
    expect(result.ok || result.message).toContain('receiver.example');
    expect(result.ok || result.message).not.toContain('127.0.0.1');
    expect(receiver.requests.length).toBe(before);
  });

  // Each target here stays on this host even if the guard failed: metadata names resolve to loopback (the
  // receiver would count the request), and fe80::1 has no zone, so a socket to it fails locally. The other
  // metadata forms are covered without sockets in src/lib/guarded-connector.test.ts.
  it('refuses link-local addresses and metadata names even with ALLOW_PRIVATE_ENDPOINTS', async () => {
    const before = receiver.requests.length;
    const toLinkLocal: HostLookup = async () => [{ address: 'fe80::1', family: 6 }];
    const toLoopback: HostLookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const cases: [string, HostLookup][] = [
      [`http://receiver.example:${receiver.port}/hooks`, toLinkLocal],
      [`http://[fe80::1]:${receiver.port}/hooks`, toLoopback],
      [`http://metadata.google.internal:${receiver.port}/hooks`, toLoopback],
      [`http://instance-data:${receiver.port}/hooks`, toLoopback],
    ];
    for (const [url, lookup] of cases) {
      const result = await client({ lookup }).send(request(url));
      expect({ url, result }).toMatchObject({ url, result: { ok: false, failure: 'blocked' } });
    }
    expect(receiver.requests.length).toBe(before);
  });

  it.each([
    'http://[::ffff:127.0.0.1]:1/hooks',
    'http://[::1]:1/hooks',
    'http://0.0.0.0:1/hooks',
    'http://169.254.169.254/latest/meta-data/',
  ])('refuses the literal address in %s by default', async (url) => {
    expect(await client({ allowPrivate: false }).send(request(url))).toMatchObject({
      ok: false,
      failure: 'blocked',
    });
  });

  it('does not follow a redirect to a private address, and counts it as a failure', async () => {
    receiver.answer(() => ({ status: 302, headers: { location: other.url } }));
    const before = other.requests.length;
    const result = await client().send(request(receiver.url));
    expect(result).toMatchObject({ ok: false, failure: 'redirect', status: 302 });
    expect(other.requests.length).toBe(before);
  });

  it('sends plain http for a live subscription only to private addresses', async () => {
    expect(await client().send(request(receiver.url, true))).toMatchObject({ ok: true });
    const publicHost: HostLookup = async () => [{ address: '93.184.216.34', family: 4 }];
    const result = await client({ lookup: publicHost }).send(request('http://pharmacy.example/hooks', true));
    expect(result).toMatchObject({ ok: false, failure: 'blocked' });
    expect(await client({ allowPrivate: false }).send(request(receiver.url, true))).toMatchObject({
      ok: false,
      failure: 'blocked',
      message: 'Live mode needs an https URL.',
    });
  });

  it('classifies 410, other statuses with Retry-After, timeouts and refused connections', async () => {
    receiver.answer(() => ({ status: 410 }));
    expect(await client().send(request(receiver.url))).toMatchObject({
      ok: false,
      failure: 'gone',
      status: 410,
    });
    receiver.answer(() => ({ status: 503, headers: { 'retry-after': '120' } }));
    expect(await client().send(request(receiver.url))).toMatchObject({
      ok: false,
      failure: 'http_status',
      status: 503,
      retryAfterMs: 120_000,
    });
    receiver.answer(() => ({ status: 500, headers: { 'retry-after': '120' } }));
    const serverError = await client().send(request(receiver.url));
    expect(serverError).toMatchObject({ ok: false, failure: 'http_status', status: 500 });
    expect(serverError).not.toHaveProperty('retryAfterMs');
    receiver.answer(() => ({ status: 200, delayMs: 1_000 }));
    const slow = await client({ timeoutMs: 200 }).send(request(receiver.url));
    expect(slow).toMatchObject({ ok: false, failure: 'timeout' });
    expect(slow.durationMs).toBeLessThan(900);
    const closed = `http://127.0.0.1:${await freePort()}/hooks`;
    expect(await client().send(request(closed))).toMatchObject({ ok: false, failure: 'connection_refused' });
  });
});

async function freePort(): Promise<number> {
  const probe = await startReceiver();
  await probe.close();
  return probe.port;
}
