import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { generateApiKey } from '../store/api-key-secret.js';
import { findApiKeyByHash, revokeApiKey } from '../store/api-keys.js';
import { failureCounterKey } from './auth-failures.js';
import type { GatewayApp } from './types.js';

// The real lookup, counted.
vi.mock('../store/api-keys.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../store/api-keys.js')>();
  return { ...actual, findApiKeyByHash: vi.fn(actual.findApiKeyByHash) };
});

function lookupsSince(): () => number {
  const calls = vi.mocked(findApiKeyByHash).mock.calls;
  const before = calls.length;
  return () => calls.length - before;
}

describeEachDialect('failed API key attempts per client address', (getDatabase) => {
  const clock = manualClock();
  /** HTTP clients bound to different loopback source addresses: different clients to the gateway. */
  const agents = new Map<string, Agent>();
  function from(address: string): Agent {
    let agent = agents.get(address);
    if (agent === undefined) {
      agent = new Agent({ localAddress: address });
      agents.set(address, agent);
    }
    return agent;
  }
  let app: GatewayApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    await Promise.all([...agents.values()].map((agent) => agent.close()));
  });

  /** A listening gateway (defaults: 20 failures per 60 s) and a way to call it with a key from an address. */
  async function gateway(env: NodeJS.ProcessEnv = {}) {
    ({ app } = await buildTestApp(getDatabase(), { clock, env }));
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    return async (key: string, source = '127.0.0.1') => {
      const response = await request(`${base}/v1/wholesalers`, {
        headers: { 'x-api-key': key },
        dispatcher: from(source),
      });
      const body = (await response.body.json()) as Record<string, unknown>;
      return { status: response.statusCode, headers: response.headers, body };
    };
  }

  it('answers a revoked and an unknown key with the same body, request id aside', async () => {
    const call = await gateway({ API_KEY_CACHE_TTL_MS: '0' });
    const { secret, keyId } = await createTestKey(getDatabase());
    await revokeApiKey(getDatabase().db, clock, keyId);
    const revoked = await call(secret);
    const unknown = await call(generateApiKey('test'));
    expect([revoked.status, unknown.status]).toEqual([401, 401]);
    const { request_id: revokedId, ...revokedBody } = revoked.body;
    const { request_id: unknownId, ...unknownBody } = unknown.body;
    expect(revokedId).not.toBe(unknownId);
    expect(revokedBody).toEqual(unknownBody);
    expect(unknownBody).toEqual({
      error: 'api_key_invalid',
      error_code: '1101',
      message: 'The API key is unknown or has been revoked.',
      wholesaler: null,
    });
  });

  it('answers 429 with Retry-After after 20 failures from one address, looking no further key up', async () => {
    const call = await gateway();
    const lookups = lookupsSince();
    const answers = [];
    for (let i = 0; i < 25; i++) answers.push(await call(generateApiKey('test')));
    expect(answers.map((answer) => answer.status)).toEqual([...Array(20).fill(401), ...Array(5).fill(429)]);
    expect(lookups()).toBe(20);
    const refused = answers[24]!;
    expect(refused.body).toMatchObject({ error: 'rate_limited', error_code: '1400' });
    expect(refused.body.message).toMatch(
      /^Too many unknown or revoked API keys came from this address; retry in \d+ s\.$/,
    );
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it('looks a repeated unknown key up once, and counts each attempt', async () => {
    const call = await gateway({ API_KEY_FAILURES_PER_ADDRESS: '5' });
    const lookups = lookupsSince();
    const unknown = generateApiKey('live');
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await call(unknown)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(lookups()).toBe(1);
  });

  it('keeps keys that authenticated working from a blocked address; other keys from it wait, other addresses do not', async () => {
    const call = await gateway({ API_KEY_FAILURES_PER_ADDRESS: '3', API_KEY_CACHE_TTL_MS: '0' });
    const known = await createTestKey(getDatabase());
    const toRevoke = await createTestKey(getDatabase());
    expect((await call(known.secret)).status).toBe(200);
    expect((await call(toRevoke.secret)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(generateApiKey('test'))).status).toBe(401);

    expect((await call(known.secret)).status).toBe(200);
    await revokeApiKey(getDatabase().db, clock, toRevoke.keyId);
    expect((await call(toRevoke.secret)).status).toBe(429); // a failure: no 401 that tells it apart
    const unseen = await createTestKey(getDatabase());
    const lookups = lookupsSince();
    const waiting = await call(unseen.secret);
    expect(waiting.status).toBe(429);
    expect(waiting.headers['retry-after']).toBeDefined();
    expect(lookups()).toBe(0);

    expect((await call(generateApiKey('test'), '127.0.0.2')).status).toBe(401);
    expect((await call(unseen.secret, '127.0.0.2')).status).toBe(200);
  });
});

describe('failureCounterKey', () => {
  it('counts IPv4 clients by address and IPv6 clients by their /64', () => {
    expect(failureCounterKey('203.0.113.7')).toBe('203.0.113.7');
    expect(failureCounterKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(failureCounterKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(failureCounterKey('2001:db8:1:2:ffff:0:0:9')).toBe('2001:db8:1:2::/64');
    expect(failureCounterKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  });
});
