import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway, TEST_CATALOGUE } from '../../../test/gateway.js';
import { SCENARIO_PZNS } from '../../mock/index.js';
import { waitFor } from '../../msv3/test-support/local-server.js';
import { parseCatalogue } from '../../wholesalers/catalogue.js';

const { ONLY_AT_ALLIANCE, ONLY_AT_SANACORP, SHORT_EVERYWHERE, DOWN_AT_NOWEDA } = SCENARIO_PZNS;

/** Catalogue wholesalers reached through the sandbox with a test key (no servers of their own). */
const sandboxOnly = (...ids: string[]) =>
  parseCatalogue({ wholesalers: ids.map((id) => ({ id, name: id, version: 2 })) });

const logins = (...ids: string[]) => ids.map((id) => `${id}=("apotheke1" "compare-secret")`).join(', ');

const compare = (body: unknown, header: string | null) => ({
  url: '/v1/availability/compare',
  body,
  credentials: null,
  headers: (header === null ? {} : { 'x-msv3-credentials': header }) as Record<string, string>,
});

interface Answer {
  wholesalers: {
    wholesaler: string;
    status: string;
    answer: unknown;
    error: Record<string, unknown> | null;
  }[];
  items: {
    pzn: string;
    recommendation: { wholesaler: string | null; units: number; delivers_all: boolean; reason: string };
    offers: { wholesaler: string; units: number }[];
  }[];
}

describeEachDialect('POST /v1/availability/compare against the sandbox', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({
      database: getDatabase(),
      catalogue: (mocks, closed) => [
        ...TEST_CATALOGUE(mocks, closed),
        ...sandboxOnly('alliance', 'sanacorp', 'noweda'),
      ],
    });
  });
  afterAll(() => gw.close());

  it('asks every wholesaler and recommends where the goods are', async () => {
    const response = await gw.inject(
      compare(
        {
          wholesalers: ['phoenix', 'alliance', 'sanacorp'],
          items: [
            { pzn: '4114918', quantity: 3 },
            { pzn: ONLY_AT_ALLIANCE.pzn, quantity: 10 },
            { pzn: ONLY_AT_SANACORP.pzn, quantity: 10 },
            { pzn: SHORT_EVERYWHERE.pzn, quantity: 10 },
          ],
        },
        logins('phoenix', 'alliance', 'sanacorp'),
      ),
    );
    expect(response.statusCode).toBe(200);
    const body = response.json() as Answer;
    expect(body).toMatchObject({ deadline_ms: 5000 });
    expect(body.wholesalers.map((w) => [w.wholesaler, w.status])).toEqual([
      ['phoenix', 'ok'],
      ['alliance', 'ok'],
      ['sanacorp', 'ok'],
    ]);
    expect(body.wholesalers[0]!.answer).toMatchObject({
      response_type: 'standard',
      items: [{ pzn: '04114918', available: true }, {}, {}, {}],
    });
    const picks = body.items.map((item) => [
      item.pzn,
      item.recommendation.wholesaler,
      item.recommendation.units,
    ]);
    expect(picks).toEqual([
      ['04114918', 'phoenix', 3],
      [ONLY_AT_ALLIANCE.pzn, 'alliance', 10],
      [ONLY_AT_SANACORP.pzn, 'sanacorp', 10],
      [SHORT_EVERYWHERE.pzn, 'sanacorp', 5],
    ]);
    expect(body.items[1]!.recommendation.reason).toMatch(
      /^phoenix cannot deliver it; alliance delivers all 10 on \d\d\.\d\d\. at \d\d:\d\d\.$/,
    );
    expect(body.items[3]!.recommendation).toMatchObject({ delivers_all: false });
    expect(body.items[3]!.recommendation.reason).toMatch(
      /No wholesaler delivers all 10; sanacorp delivers the most, 5 of 10/,
    );
    expect(body.items[3]!.offers).toEqual([
      expect.objectContaining({ wholesaler: 'phoenix', units: 3 }),
      expect.objectContaining({ wholesaler: 'alliance', units: 4 }),
      expect.objectContaining({ wholesaler: 'sanacorp', units: 5 }),
    ]);
  });

  it('reports the wholesaler that is down and recommends from the others', async () => {
    const response = await gw.inject(
      compare(
        {
          wholesalers: ['noweda', 'phoenix', 'alliance'],
          items: [{ pzn: DOWN_AT_NOWEDA.pzn, quantity: 2 }],
        },
        logins('noweda', 'phoenix', 'alliance'),
      ),
    );
    expect(response.statusCode).toBe(200);
    const body = response.json() as Answer;
    expect(body.wholesalers[0]).toMatchObject({
      wholesaler: 'noweda',
      status: 'error',
      answer: null,
      error: { kind: 'wholesaler_fault', error_code: '1501', message: expect.stringContaining('noweda') },
    });
    expect(body.wholesalers.slice(1).map((w) => w.status)).toEqual(['ok', 'ok']);
    expect(body.items[0]!.recommendation).toMatchObject({ wholesaler: 'phoenix', units: 2 });
    expect(body.items[0]!.recommendation.reason).toMatch(
      /^noweda answered with an error; phoenix delivers all 2/,
    );
  });

  it("makes a v1 wholesaler's quantity limit its own entry, and explains a PZN that is none", async () => {
    const response = await gw.inject(
      compare(
        {
          wholesalers: ['gehe', 'phoenix'],
          items: [
            { pzn: '04114918', quantity: 10_000 },
            { pzn: '04114917', quantity: 1 },
          ],
        },
        logins('gehe', 'phoenix'),
      ),
    );
    expect(response.statusCode).toBe(200);
    const body = response.json() as Answer;
    expect(body.wholesalers[0]).toMatchObject({
      wholesaler: 'gehe',
      status: 'error',
      error: { kind: 'invalid_request', message: expect.stringContaining('at most 9999') },
    });
    expect(body.wholesalers[1]).toMatchObject({ wholesaler: 'phoenix', status: 'ok' });
    expect(body.items[0]!.recommendation).toMatchObject({ wholesaler: 'phoenix' });
    expect(body.items[1]!.recommendation).toMatchObject({ wholesaler: null, units: 0 });
    expect(body.items[1]!.recommendation.reason).toMatch(/wrong check digit.*Not asked\.$/);
  });

  it('refuses what the caller can fix before asking anyone', async () => {
    const before = gw.mocks.sandbox.requestCount('verfuegbarkeitAnfragen');
    const items = [{ pzn: '04114918', quantity: 1 }];
    const unknown = await gw.inject(
      compare({ wholesalers: ['phoenix', 'alliace'], items }, logins('phoenix', 'alliace')),
    );
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'wholesaler_not_found', wholesaler: 'alliace' });

    const repeated = await gw.inject(
      compare({ wholesalers: ['phoenix', 'alliance', 'Phoenix'], items }, logins('phoenix', 'alliance')),
    );
    expect(repeated.statusCode).toBe(400);
    expect(repeated.json()).toMatchObject({ error: 'invalid_request', param: 'wholesalers[2]' });

    const twice = await gw.inject(
      compare(
        { wholesalers: ['phoenix'], items: [...items, { pzn: '4114918', quantity: 2 }] },
        logins('phoenix'),
      ),
    );
    expect(twice.json()).toMatchObject({ error: 'invalid_request', param: 'items[1].pzn' });

    const noLogin = await gw.inject(
      compare({ wholesalers: ['phoenix', 'alliance'], items }, logins('phoenix')),
    );
    expect(noLogin.statusCode).toBe(400);
    expect(noLogin.json()).toMatchObject({
      error: 'wholesaler_credentials_missing',
      wholesaler: 'alliance',
      param: 'X-MSV3-Credentials',
    });
    expect(noLogin.body).not.toContain('compare-secret');

    for (const body of [
      { wholesalers: [], items },
      { wholesalers: Array.from({ length: 11 }, (_, i) => `w${i}`), items },
      { wholesalers: ['phoenix'], items, deadline_ms: 99 },
      { wholesalers: ['phoenix'], items, deadline_ms: 30_001 },
    ]) {
      const refused = await gw.inject(compare(body, logins('phoenix')));
      expect(refused.json()).toMatchObject({ error: 'invalid_request' });
    }
    expect(gw.mocks.sandbox.requestCount('verfuegbarkeitAnfragen')).toBe(before);
  });
});

/** A loopback wholesaler that reads requests and never answers; it tells whether their sockets closed. */
async function hungWholesaler() {
  const held: { socket: Socket; closed: boolean }[] = [];
  const server: Server = createServer((request) => {
    request.resume();
    const entry = { socket: request.socket, closed: false };
    request.socket.on('close', () => {
      entry.closed = true;
    });
    held.push(entry);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/msv3/v2.0`,
    /** Requests received whose connection is still open. */
    open: () => held.filter((entry) => !entry.closed).length,
    received: () => held.length,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describeEachDialect(
  'POST /v1/availability/compare with a wholesaler that never answers',
  (getDatabase) => {
    let gw: Gateway;
    let hung: Awaited<ReturnType<typeof hungWholesaler>>;
    beforeAll(async () => {
      hung = await hungWholesaler();
      gw = await startGateway({
        database: getDatabase(),
        // One failure opens a circuit: a call stopped at the deadline must not count as one.
        env: { ALLOW_PRIVATE_ENDPOINTS: 'true', BREAKER_FAILURE_THRESHOLD: '1' },
        catalogue: (mocks, closed) => [
          ...TEST_CATALOGUE(mocks, closed),
          ...parseCatalogue({
            wholesalers: [{ id: 'hung', name: 'Hung', version: 2, live: { baseUrl: hung.url } }],
          }),
        ],
      });
    });
    afterAll(async () => {
      await gw.close();
      await hung.close();
    });

    it('answers at the deadline with the others, stops the hung call and frees its connection', async () => {
      const started = Date.now();
      const response = await gw.inject({
        ...compare(
          {
            wholesalers: ['hung', 'phoenix', 'offline'],
            items: [{ pzn: '04114918', quantity: 2 }],
            deadline_ms: 300,
          },
          logins('hung', 'phoenix', 'offline'),
        ),
        key: 'live',
      });
      const tookMs = Date.now() - started;
      expect(response.statusCode).toBe(200);
      const body = response.json() as Answer;
      expect(body.wholesalers[0]).toMatchObject({
        wholesaler: 'hung',
        status: 'timeout',
        answer: null,
        error: { kind: 'wholesaler_timeout', message: expect.stringContaining('300 ms') },
      });
      expect(body.wholesalers[1]).toMatchObject({ wholesaler: 'phoenix', status: 'ok' });
      // The closed port: unreachable, with the Retry-After a single call would send.
      expect(body.wholesalers[2]).toMatchObject({
        status: 'error',
        error: { kind: 'wholesaler_unreachable', retry_after: expect.any(Number) },
      });
      expect(body.items[0]!.recommendation).toMatchObject({ wholesaler: 'phoenix', units: 2 });
      expect(body.items[0]!.recommendation.reason).toMatch(
        /^hung did not answer in time; phoenix delivers all 2/,
      );
      // Far below the 30 s headers timeout that would otherwise end the hung call: the deadline did.
      expect(tookMs).toBeLessThan(10_000);
      // The call was aborted, not left running: its connection is closed and its slot free.
      expect(hung.received()).toBe(1);
      await waitFor(() => hung.open() === 0, 1_000);
    });

    it("counts each call against its wholesaler's circuit: the open one answers at once, the stopped one stays closed", async () => {
      const response = await gw.inject({
        ...compare(
          {
            wholesalers: ['offline', 'hung', 'phoenix'],
            items: [{ pzn: '04114918', quantity: 1 }],
            deadline_ms: 300,
          },
          logins('hung', 'phoenix', 'offline'),
        ),
        key: 'live',
      });
      const body = response.json() as Answer;
      // offline failed once above: its circuit is open, so it is not even called.
      expect(body.wholesalers[0]).toMatchObject({
        status: 'error',
        error: { kind: 'wholesaler_circuit_open', retry_after: expect.any(Number) },
      });
      // hung was stopped by the deadline, not failed by the wholesaler: asked again, timed out again.
      expect(body.wholesalers[1]).toMatchObject({ status: 'timeout' });
      expect(hung.received()).toBe(2);
      expect(body.wholesalers[2]).toMatchObject({ status: 'ok' });
    });
  },
  { only: 'sqlite' },
);
