import { request } from 'node:http';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { describeEachDialect } from '../../test/db.js';
import { until } from '../../test/until.js';
import { ApiError } from '../core/errors.js';
import { manualClock } from '../lib/clock.js';
import { purgeExpiredIdempotencyKeys } from '../store/idempotency.js';
import type { AppDeps, RouteRegistration } from './app-deps.js';
import type { IdempotencyContext } from './idempotency.js';
import { setIdempotencyOutcome } from './idempotency.js';
import type { GatewayApp } from './types.js';

const DAY = 24 * 60 * 60 * 1000;
const LOCK_MS = 2_000;

/**
 * A modifying probe route: counts executions, records what it saw of the key, and answers as told by
 * `outcome` (a status code, an error kind, or `hang` until `release()`).
 */
function probeRoute(state: {
  runs: number;
  seen: (IdempotencyContext | null)[];
  gate?: Promise<void>;
}): RouteRegistration {
  return (app) => {
    app.post(
      '/test/idempotent',
      {
        config: { idempotent: true },
        schema: {
          body: Type.Object(
            {
              note: Type.String(),
              outcome: Type.Optional(Type.String()),
              keep: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
          querystring: Type.Object({ flag: Type.Optional(Type.String()) }),
        },
      },
      async (request, reply) => {
        state.runs += 1;
        state.seen.push(request.idempotency);
        const { outcome, keep } = request.body;
        if (outcome === 'hang') await state.gate;
        if (keep) setIdempotencyOutcome(request, 'store');
        if (outcome === 'unreachable') throw new ApiError('wholesaler_unreachable', 'down');
        if (outcome === 'open') throw new ApiError('order_outcome_unknown', 'open');
        if (outcome === 'rejected') throw new ApiError('order_rejected', 'no');
        if (outcome === 'invalid') throw new ApiError('invalid_request', 'bad', { param: 'note' });
        reply.code(201).header('location', `/test/things/${state.runs}`);
        return { run: state.runs, note: request.body.note };
      },
    );
  };
}

describeEachDialect('Idempotency-Key', (getDatabase) => {
  const clock = manualClock(Date.UTC(2026, 0, 5, 9, 0, 0));
  const state: { runs: number; seen: (IdempotencyContext | null)[]; gate?: Promise<void> } = {
    runs: 0,
    seen: [],
  };
  let app: GatewayApp;
  let deps: AppDeps;
  let apiKey: string;
  let counter = 0;
  const newKey = () => {
    counter += 1;
    return `key-${Date.now()}-${counter}`;
  };

  beforeAll(async () => {
    ({ app, deps } = await buildTestApp(getDatabase(), {
      clock,
      env: { IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_MS), RATE_LIMIT_TEST_POINTS: '100000' },
      extraRoutes: [probeRoute(state)],
    }));
    apiKey = (await createTestKey(getDatabase())).secret;
  });
  afterAll(() => app.close());

  function send(
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
    query = '',
    target: GatewayApp = app,
  ) {
    return target.inject({
      method: 'POST',
      url: `/test/idempotent${query}`,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });
  }

  describe('replay', () => {
    it('returns the stored status, body and headers with Idempotent-Replayed, without running again', async () => {
      const key = newKey();
      const runs = state.runs;
      const first = await send({ note: 'a' }, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const again = await send({ note: 'a' }, { 'idempotency-key': key });
      expect(state.runs).toBe(runs + 1);
      expect(again.statusCode).toBe(201);
      expect(again.body).toBe(first.body);
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['original-request']).toBe(first.headers['x-request-id']);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
    });

    it('stores and replays an answer sent as bytes (4,096 characters or more) byte for byte', async () => {
      const key = newKey();
      const note = 'Grüße aus der Apotheke, 😀 '.repeat(240);
      const first = await send({ note }, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      expect(first.rawPayload.length).toBeGreaterThan(4_096);
      expect(first.json<{ note: string }>().note).toBe(note);
      const again = await send({ note }, { 'idempotency-key': key });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
      expect(again.headers['content-length']).toBe(String(first.rawPayload.length));
    });

    it('runs every request without a key', async () => {
      const runs = state.runs;
      await send({ note: 'a' });
      await send({ note: 'a' });
      expect(state.runs).toBe(runs + 2);
    });

    it('sees the same request in another key order and with defaults left out', async () => {
      const key = newKey();
      await send({ note: 'b', keep: false }, { 'idempotency-key': key });
      const reordered = await app.inject({
        method: 'POST',
        url: '/test/idempotent',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'idempotency-key': key },
        payload: '{"keep":false,"note":"b"}',
      });
      expect(reordered.headers['idempotent-replayed']).toBe('true');
    });

    it('keeps keys of different API keys apart', async () => {
      const key = newKey();
      const other = (await createTestKey(getDatabase())).secret;
      const runs = state.runs;
      await send({ note: 'a' }, { 'idempotency-key': key });
      const theirs = await send({ note: 'a' }, { 'idempotency-key': key, 'x-api-key': other });
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(state.runs).toBe(runs + 2);
    });
  });

  describe('misuse', () => {
    it('refuses the key with another body, query or MSV3 user (422) without running', async () => {
      const key = newKey();
      await send({ note: 'a' }, { 'idempotency-key': key, 'x-msv3-username': 'apotheke1' });
      const runs = state.runs;
      for (const response of [
        await send({ note: 'b' }, { 'idempotency-key': key, 'x-msv3-username': 'apotheke1' }),
        await send({ note: 'a' }, { 'idempotency-key': key, 'x-msv3-username': 'apotheke1' }, '?flag=1'),
        await send({ note: 'a' }, { 'idempotency-key': key, 'x-msv3-username': 'apotheke2' }),
      ]) {
        expect(response.statusCode).toBe(422);
        expect(response.json()).toMatchObject({ error: 'idempotency_key_reused', param: 'Idempotency-Key' });
      }
      expect(state.runs).toBe(runs);
    });

    it('ignores the MSV3 password: the same request with another password is a replay', async () => {
      const key = newKey();
      await send(
        { note: 'a' },
        { 'idempotency-key': key, 'x-msv3-username': 'apo', 'x-msv3-password': 'one' },
      );
      const again = await send(
        { note: 'a' },
        { 'idempotency-key': key, 'x-msv3-username': 'apo', 'x-msv3-password': 'two' },
      );
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it.each([
      ['empty', ''],
      ['too long', 'k'.repeat(256)],
      ['not ASCII', 'schlüssel'],
    ])('refuses a malformed key (%s) with 400', async (_name, key) => {
      const response = await app.inject({
        method: 'POST',
        url: '/test/idempotent',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'idempotency-key': key },
        payload: '{"note":"x"}',
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe('invalid_idempotency_key');
    });

    it('accepts 255 printable characters', async () => {
      expect((await send({ note: 'a' }, { 'idempotency-key': `${'~'.repeat(254)}!` })).statusCode).toBe(201);
    });

    it('refuses the header sent twice, which Node would join into one value', async () => {
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const { statusCode, body } = await new Promise<{ statusCode: number; body: string }>(
        (resolve, reject) => {
          const req = request(`${base}/test/idempotent`, {
            method: 'POST',
            headers: {
              'x-api-key': apiKey,
              'content-type': 'application/json',
              'idempotency-key': ['a', 'b'],
            },
          });
          req.on('response', (res) => {
            let text = '';
            res.on('data', (chunk) => {
              text += chunk;
            });
            res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body: text }));
          });
          req.on('error', reject);
          req.end('{"note":"x"}');
        },
      );
      expect(statusCode).toBe(400);
      expect(JSON.parse(body)).toMatchObject({
        error: 'invalid_idempotency_key',
        message: expect.stringMatching(/once/),
      });
    });
  });

  describe('what is stored', () => {
    it('does not store a schema refusal: the corrected request with the key runs', async () => {
      const key = newKey();
      const refused = await send({ note: 1 }, { 'idempotency-key': key });
      expect(refused.statusCode).toBe(400);
      expect((await send({ note: 'ok' }, { 'idempotency-key': key })).statusCode).toBe(201);
    });

    it('releases the key after a refusal or failure of the handler (nothing happened)', async () => {
      for (const outcome of ['invalid', 'unreachable']) {
        const key = newKey();
        expect(
          (await send({ note: 'a', outcome }, { 'idempotency-key': key })).statusCode,
        ).toBeGreaterThanOrEqual(400);
        const fixed = await send({ note: 'fixed' }, { 'idempotency-key': key });
        expect(fixed.statusCode).toBe(201);
        expect(fixed.headers['idempotent-replayed']).toBeUndefined();
      }
    });

    it('stores a final error such as order_rejected', async () => {
      const key = newKey();
      const first = await send({ note: 'a', outcome: 'rejected' }, { 'idempotency-key': key });
      expect(first.statusCode).toBe(422);
      const again = await send({ note: 'a', outcome: 'rejected' }, { 'idempotency-key': key });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
    });

    it('lets the route keep an outcome the default rule would release', async () => {
      const key = newKey();
      await send({ note: 'a', outcome: 'unreachable', keep: true }, { 'idempotency-key': key });
      const again = await send({ note: 'a', outcome: 'unreachable', keep: true }, { 'idempotency-key': key });
      expect(again.statusCode).toBe(502);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('reopens an open outcome for the same request only, with the next attempt and the same first use', async () => {
      const key = newKey();
      await send({ note: 'a', outcome: 'open' }, { 'idempotency-key': key });
      const first = state.seen.at(-1)!;
      expect((await send({ note: 'other' }, { 'idempotency-key': key })).statusCode).toBe(422);
      clock.advance(1_000);
      const retry = await send({ note: 'a', outcome: 'open' }, { 'idempotency-key': key });
      expect(retry.statusCode).toBe(504);
      expect(state.seen.at(-1)).toEqual({ key, attempt: 2, firstUsedAt: first.firstUsedAt });
    });
  });

  describe('in flight', () => {
    it('answers a duplicate with 409 and Retry-After while the first runs, then replays', async () => {
      const key = newKey();
      let release: () => void = () => {};
      state.gate = new Promise((resolve) => {
        release = resolve;
      });
      const runs = state.runs;
      const first = send({ note: 'slow', outcome: 'hang' }, { 'idempotency-key': key });
      await until('the first request running', () => state.runs !== runs, 5_000, 5);
      const duplicate = await send({ note: 'slow', outcome: 'hang' }, { 'idempotency-key': key });
      expect(duplicate.statusCode).toBe(409);
      expect(duplicate.json().error).toBe('idempotency_request_in_progress');
      expect(duplicate.headers['retry-after']).toBe('1');
      release();
      expect((await first).statusCode).toBe(201);
      expect(
        (await send({ note: 'slow', outcome: 'hang' }, { 'idempotency-key': key })).headers[
          'idempotent-replayed'
        ],
      ).toBe('true');
      expect(state.runs).toBe(runs + 1);
    });

    it('lets a retry take over once the lock of a crashed process has expired', async () => {
      // A second app on its own database handle plays the process that dies mid-request: its handle is
      // closed while the handler runs, so its heartbeat can no longer renew the lock.
      const doomedDatabase = await getDatabase().openAnother();
      const doomed = (
        await buildTestApp(doomedDatabase, {
          clock,
          env: { IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_MS), RATE_LIMIT_TEST_POINTS: '100000' },
          extraRoutes: [probeRoute(state)],
        })
      ).app;
      const key = newKey();
      let release: () => void = () => {};
      state.gate = new Promise((resolve) => {
        release = resolve;
      });
      const runs = state.runs;
      const crashed = send({ note: 'c', outcome: 'hang' }, { 'idempotency-key': key }, '', doomed);
      await until('the first request running', () => state.runs !== runs, 5_000, 5);
      await doomedDatabase.close();

      const body = { note: 'c', outcome: 'hang' };
      expect((await send(body, { 'idempotency-key': key })).statusCode).toBe(409);
      clock.advance(LOCK_MS);
      state.gate = Promise.resolve(); // the retry's handler finishes at once; the crashed one still waits
      const takeover = await send(body, { 'idempotency-key': key });
      expect(takeover.statusCode).toBe(201);
      expect(state.seen.at(-1)).toMatchObject({ key, attempt: 2 });

      release();
      await crashed.catch(() => {});
      await doomed.close();
      // The crashed process's late answer cannot overwrite the stored one: it lost the lock.
      const replay = await send(body, { 'idempotency-key': key });
      expect(replay.body).toBe(takeover.body);
    });
  });

  describe('documentation', () => {
    it('lists the Idempotency-Key header on every opted-in route in the OpenAPI document', async () => {
      const document = (await app.inject({ url: '/v1/openapi.json' })).json();
      const headerOf = (path: string, method: string) =>
        document.paths[path]?.[method]?.parameters?.find(
          (p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key',
        );
      expect(headerOf('/v1/orders', 'post')).toMatchObject({ required: false });
      expect(headerOf('/v1/orders', 'post').description).toMatch(/Idempotent-Replayed/);
      expect(headerOf('/v1/orders/{order_id}/status', 'get')).toBeUndefined();
    });
  });

  describe('expiry', () => {
    it('forgets a key after 24 hours: purged, and the key starts a new request', async () => {
      const key = newKey();
      await send({ note: 'old' }, { 'idempotency-key': key });
      clock.advance(DAY - 1);
      expect((await send({ note: 'new' }, { 'idempotency-key': key })).statusCode).toBe(422);

      clock.advance(1);
      expect(await purgeExpiredIdempotencyKeys(deps.database.db, clock)).toBeGreaterThanOrEqual(1);
      const fresh = await send({ note: 'new' }, { 'idempotency-key': key });
      expect(fresh.statusCode).toBe(201);
      expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    });
  });
});
