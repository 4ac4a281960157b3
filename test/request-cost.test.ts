import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import Fastify, { type FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, createCredentials } from '../src/msv3/credentials.js';
import { verfuegbarkeitAnfragen } from '../src/msv3/operations/verfuegbarkeit-anfragen.js';
import { createLogger } from '../src/observability/logger.js';
import { allocatedBytes } from './allocated-bytes.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { type Gateway, startGateway, TEST_CREDENTIALS } from './gateway.js';
import { validPzns } from './pzns.js';

/**
 * The per-request work budget of the gateway's hot path, counted, not timed (docs/performance.md
 * "Keeping it there"): the asynchronous resources (promises, ticks, immediates, timers) one
 * `POST /v1/availability` of 50 items creates in the gateway, and how many more promises than a bare
 * pass-through creates for the same wholesaler call in the same process. Every `await`, async hook
 * and promise chain between layers is one or more, each a microtask hop with its allocations; spread
 * over many small steps, their cost hides in a flat profile. Counts do not depend on the machine's load, so this cannot be flaky; a change that
 * adds async steps to every request fails here and says how many, of which kind.
 *
 * Counted: resources whose creation descends from the request (AsyncLocalStorage scope around each
 * inject), so the mock wholesaler's own server work and periodic jobs are not. The gateway runs as
 * `npm start` runs it: a JSON log line per request (to a discarding stream), metrics on, auth with its
 * cache, the rate limiter, validation and the breaker.
 */

/**
 * The budget per request, measured 2026-11-29 on Node 20.20 and 24.22 alike: the gateway created 35
 * promises, 9 ticks, 5 immediates, 2 timers and one parser resource per call (52 in all), 23 promises
 * more than the bare pass-through. A little room for dependency updates. Lower it when a change saves
 * steps; raise it only with the reason in the commit and the ledger re-run (docs/performance.md).
 */
const BUDGET = { total: 55, addedPromises: 24 } as const;
const WARM_UP = 30;
const MEASURED = 40;

/**
 * The bytes one availability call of 50 items allocates on V8's heap beyond what the bare pass-through
 * allocates for the same wholesaler call (decoding the answer into the typed model, mapping it, the JSON
 * answer, the log line), measured 2026-12-01: 190–192 KB on Node 20.20, 175 KB on Node 24.22 (earlier
 * figures in bench/results/HISTORY.md "Keeping it there"). Every object
 * is an allocation and, once dead, part of a scavenge; garbage collection is 5–8 % of the gateway's CPU
 * under load. A change that copies the answer once more, or builds a structure per article, shows
 * here. Same rule as BUDGET: lower it when a change saves, raise it only with the reason and the ledger
 * re-run (`npm run bench:gateway -- --ledger` reports the bytes per stage).
 */
const ADDED_BYTES_BUDGET = 200 * 1024;
const ALLOCATION_WARM_UP = 200;
const ALLOCATION_MEASURED = 200;

const scope = new AsyncLocalStorage<{ counting: boolean }>();
/** REQUEST_COST_TRACE=1: print where each counted resource was created (the first frame of ours). */
const TRACE = process.env.REQUEST_COST_TRACE === '1';

/** Resources created per request, by type, for `requests` sequential calls of `send`. */
async function countPerRequest(send: () => Promise<void>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const places = new Map<string, number>();
  const hook = createHook({
    init(_id, type) {
      if (!scope.getStore()?.counting) return;
      counts[type] = (counts[type] ?? 0) + 1;
      if (TRACE) {
        const frames = (new Error().stack ?? '').split('\n').slice(2);
        const place = frames.find((line) => !/node:internal|node:async_hooks|request-cost\.test/.test(line));
        const key = `${type} ${place?.trim() ?? '?'}`;
        places.set(key, (places.get(key) ?? 0) + 1);
      }
    },
  });
  const store = { counting: false };
  await scope.run(store, async () => {
    for (let i = 0; i < WARM_UP; i++) await send();
  });
  hook.enable();
  try {
    store.counting = true;
    await scope.run(store, async () => {
      for (let i = 0; i < MEASURED; i++) await send();
    });
  } finally {
    store.counting = false;
    hook.disable();
  }
  if (TRACE)
    for (const [place, n] of [...places].sort((a, b) => b[1] - a[1]))
      console.log(`${(n / MEASURED).toFixed(2).padStart(6)} ${place}`);
  return Object.fromEntries(
    Object.entries(counts).map(([type, n]) => [type, Math.round((n / MEASURED) * 100) / 100]),
  );
}

/**
 * Bytes allocated on V8's heap per call of `send`, after a warm-up (so the calls run optimised code):
 * what the heap grew by plus what each collection in between freed (`v8.GCProfiler`). The whole
 * process counts, the in-process mock wholesaler included; it does the same work for either app, so
 * the difference between two apps is theirs. Allocation does not depend on the machine's load.
 */
async function allocatedPerRequest(send: () => Promise<void>): Promise<number> {
  for (let i = 0; i < ALLOCATION_WARM_UP; i++) await send();
  const bytes = await allocatedBytes(async () => {
    for (let i = 0; i < ALLOCATION_MEASURED; i++) await send();
  });
  return bytes / ALLOCATION_MEASURED;
}

/** A bare pass-through: Fastify validating nothing, one undici POST of the same SOAP body, fixed JSON. */
function passThrough(url: string, body: string): { app: FastifyInstance; close(): Promise<void> } {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 4 });
  const authorization = basicAuthorization(
    createCredentials(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password),
  );
  const app = Fastify({ logger: false });
  app.post('/v1/availability', async (_request, reply) => {
    const response = await pool.request({
      path: `${target.pathname}/verfuegbarkeitAnfragen`,
      method: 'POST',
      headers: {
        'content-type': `application/soap+xml; charset=utf-8; action="${verfuegbarkeitAnfragen.soapAction(2)}"`,
        authorization,
      },
      body,
    });
    await response.body.text();
    return reply.type('application/json; charset=utf-8').send('{}');
  });
  return {
    app,
    async close() {
      await app.close();
      await pool.close();
    },
  };
}

describe('the work of one request on the hot path', () => {
  let database: TestDatabase;
  let gw: Gateway;
  let baseline: ReturnType<typeof passThrough>;
  const items = validPzns(50).map((pzn) => ({ pzn, quantity: 2 }));

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const logger = createLogger({ level: 'info', destination: { write: () => {} } });
    gw = await startGateway({ database, logger });
    const soap = verfuegbarkeitAnfragen.encodeRequest(2, {
      clientSoftwareId: 'request-cost',
      id: '9b2f1f0e-7c1a-4e59-9a57-3c2d1b0a8f6e',
      articles: items.map((item) => ({ pzn: item.pzn, quantity: item.quantity, demand: 'direkt' })),
    });
    baseline = passThrough(
      gw.mocks.sandbox.baseUrl({ tenant: gw.sandboxTenant('phoenix'), version: 2 }),
      soap,
    );
    await baseline.app.ready();
  });
  afterAll(async () => {
    await baseline?.close();
    await gw?.close();
    await database?.dispose();
  });

  const gatewayCall = async () => {
    const response = await gw.inject({ url: '/v1/availability', body: { wholesaler: 'phoenix', items } });
    expect(response.statusCode, response.body).toBe(200);
  };
  const bareCall = async () => {
    const response = await baseline.app.inject({ method: 'POST', url: '/v1/availability' });
    expect(response.statusCode, response.body).toBe(200);
  };

  it('creates no more asynchronous resources per availability call than its budget', async () => {
    const gateway = await countPerRequest(gatewayCall);
    const bare = await countPerRequest(bareCall);
    const added = Object.fromEntries(
      [...new Set([...Object.keys(gateway), ...Object.keys(bare)])].map((type) => [
        type,
        Math.round(((gateway[type] ?? 0) - (bare[type] ?? 0)) * 100) / 100,
      ]),
    );
    // The counting itself works: a gateway request is asynchronous all along.
    expect(gateway.PROMISE ?? 0).toBeGreaterThan(0);
    const total = Math.round(Object.values(gateway).reduce((sum, n) => sum + n, 0) * 100) / 100;
    const report = `per request: gateway ${JSON.stringify(gateway)} (${total} in all), bare pass-through ${JSON.stringify(bare)}, gateway minus pass-through ${JSON.stringify(added)}; budget ${JSON.stringify(BUDGET)}. REQUEST_COST_TRACE=1 lists where each is created.`;
    console.log(`[request-cost] ${report}`);
    expect(
      total,
      `The gateway now creates ${total} asynchronous resources per availability request, over its budget of ${BUDGET.total}: an added await, async hook, promise chain or timer on the hot path. ${report}`,
    ).toBeLessThanOrEqual(BUDGET.total);
    expect(
      added.PROMISE ?? 0,
      `The gateway now creates ${added.PROMISE} promises per request more than a bare pass-through, over its budget of ${BUDGET.addedPromises}: an added await, async hook or async wrapper between layers. ${report}`,
    ).toBeLessThanOrEqual(BUDGET.addedPromises);
  });

  it('allocates no more per availability call than its budget beyond the pass-through', async () => {
    // Every item asked: a refused PZN would spare the gateway its decoding and mapping.
    const answer = (
      await gw.inject({ url: '/v1/availability', body: { wholesaler: 'phoenix', items } })
    ).json();
    expect(answer.items.filter((item: { invalid_pzn: unknown }) => item.invalid_pzn === null)).toHaveLength(
      50,
    );
    const bare = await allocatedPerRequest(bareCall);
    const gateway = await allocatedPerRequest(gatewayCall);
    const added = gateway - bare;
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    const report = `per request: gateway ${kb(gateway)}, bare pass-through ${kb(bare)}, gateway minus pass-through ${kb(added)}; budget ${kb(ADDED_BYTES_BUDGET)}. \`npm run bench:gateway -- --ledger\` shows the bytes per stage.`;
    console.log(`[request-cost] allocation ${report}`);
    // The measuring itself works: the gateway decodes a 50-article answer into objects.
    expect(added).toBeGreaterThan(20 * 1024);
    expect(
      added,
      `The gateway now allocates ${kb(added)} per availability request beyond a bare pass-through, over its budget: a copy or a structure per article added on the hot path. ${report}`,
    ).toBeLessThanOrEqual(ADDED_BYTES_BUDGET);
  });
});
