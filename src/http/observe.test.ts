import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { type Gateway, startGateway, TEST_CATALOGUE, TEST_CREDENTIALS } from '../../test/gateway.js';
import { until } from '../../test/until.js';
import { SCENARIO_PASSWORDS, SCENARIO_PZNS } from '../mock/index.js';
import { createLogger } from '../observability/logger.js';
import { parseCatalogue } from '../wholesalers/catalogue.js';

const PZNS = ['04114918', '09990010'];
/** Catalogue wholesalers reached through the sandbox with a test key; noweda fails for DOWN_AT_NOWEDA. */
const SANDBOX_ONLY = ['alliance', 'sanacorp', 'noweda', 'aep', 'gehe', 'kehr', 'ebert', 'hageda', 'richter'];

interface RequestLine {
  msg: string;
  request_id: string;
  req: { method: string; route?: string };
  res: { status: number };
  account_id?: string;
  key_id?: string;
  mode?: string;
  error_kind?: string;
  wholesaler?: string;
  msv3_operation?: string;
  upstream_ms?: number;
  upstream_outcome?: string;
}

/**
 * The request log line tells failures apart: who called (account, key id, mode), what was answered
 * (status, error kind) and what the wholesaler did (wholesaler, operation, time, outcome). Never the key,
 * a password or the PZNs asked for.
 */
describe('request log lines', () => {
  let database: TestDatabase;
  let gw: Gateway;
  const written: string[] = [];
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => written.push(line) },
    });
    gw = await startGateway({
      database,
      logger,
      env: { UPSTREAM_HEADERS_TIMEOUT_MS: '300' },
      mockOptions: { sandbox: { lateAnswerMs: 2_000 } },
      catalogue: (mocks, closed) => [
        ...TEST_CATALOGUE(mocks, closed),
        ...parseCatalogue({ wholesalers: SANDBOX_ONLY.map((id) => ({ id, name: id, version: 2 })) }),
      ],
    });
  });
  afterAll(async () => {
    await gw.close();
    await database.dispose();
  });

  async function lineOf(requestId: unknown): Promise<RequestLine> {
    return until(
      `the log line of ${String(requestId)}`,
      () =>
        written
          .map((line) => JSON.parse(line) as RequestLine)
          .find((line) => line.msg === 'request completed' && line.request_id === requestId),
      2_000,
    );
  }

  const availability = (
    pzns: string[],
    credentials: { username: string; password: string } = TEST_CREDENTIALS,
  ) =>
    gw.inject({
      url: '/v1/availability/bulk',
      body: { wholesaler: 'phoenix', pzns },
      credentials,
    });

  it('names caller, route, wholesaler, operation and upstream time of a successful call', async () => {
    const response = await availability(PZNS);
    expect(response.statusCode).toBe(200);
    const line = await lineOf(response.headers['x-request-id']);
    expect(line).toMatchObject({
      req: { method: 'POST', route: '/v1/availability/bulk' },
      res: { status: 200 },
      account_id: gw.keys.test.accountId,
      key_id: expect.stringMatching(/^key_/),
      mode: 'test',
      wholesaler: 'phoenix',
      msv3_operation: 'verfuegbarkeitAnfragenBulk',
      upstream_outcome: 'ok',
    });
    expect(line.upstream_ms).toBeGreaterThan(0);
    expect(line.error_kind).toBeUndefined();
  });

  it("tells a wholesaler's password rejection from a bad API key and from a timeout", async () => {
    const rejected = await availability(PZNS, {
      username: 'apotheke1',
      password: SCENARIO_PASSWORDS.REJECTED,
    });
    expect(rejected.statusCode).toBe(401);
    const badKey = await gw.inject({
      url: '/v1/availability/bulk',
      body: { wholesaler: 'phoenix', pzns: PZNS },
      // The last character changed (a random secret may already end in `x`).
      key: `${gw.keys.test.secret.slice(0, -1)}${gw.keys.test.secret.endsWith('x') ? 'y' : 'x'}`,
    });
    expect(badKey.statusCode).toBe(401);
    const timedOut = await gw.inject({
      url: '/v1/availability',
      body: { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.LATE_ANSWER.pzn, quantity: 1 }] },
    });
    expect(timedOut.statusCode).toBe(504);

    expect(await lineOf(rejected.headers['x-request-id'])).toMatchObject({
      res: { status: 401 },
      account_id: gw.keys.test.accountId,
      error_kind: 'wholesaler_credentials_rejected',
      wholesaler: 'phoenix',
      msv3_operation: 'verfuegbarkeitAnfragenBulk',
      upstream_outcome: 'wholesaler_credentials_rejected',
    });
    const keyLine = await lineOf(badKey.headers['x-request-id']);
    expect(keyLine).toMatchObject({ res: { status: 401 }, error_kind: 'api_key_invalid' });
    expect(keyLine).not.toHaveProperty('account_id');
    expect(keyLine).not.toHaveProperty('wholesaler');
    const timeoutLine = await lineOf(timedOut.headers['x-request-id']);
    expect(timeoutLine).toMatchObject({
      res: { status: 504 },
      error_kind: 'wholesaler_timeout',
      msv3_operation: 'verfuegbarkeitAnfragen',
      upstream_outcome: 'wholesaler_timeout',
    });
    expect(timeoutLine.upstream_ms).toBeGreaterThanOrEqual(300);
  });

  it('names every wholesaler of a comparison of ten, and the failure of one', async () => {
    const wholesalers = ['phoenix', ...SANDBOX_ONLY];
    const response = await gw.inject({
      url: '/v1/availability/compare',
      body: { wholesalers, items: [{ pzn: SCENARIO_PZNS.DOWN_AT_NOWEDA.pzn, quantity: 1 }] },
      credentials: null,
      headers: {
        'x-msv3-credentials': wholesalers.map((id) => `${id}=("apotheke1" "compare-secret")`).join(', '),
      },
    });
    expect(response.statusCode).toBe(200);
    const line = await lineOf(response.headers['x-request-id']);
    // Listed as the calls ended: each wholesaler once, each of the ten calls.
    expect(line.wholesaler?.split(',').sort()).toEqual([...wholesalers].sort());
    expect(line.msv3_operation?.split(',')).toEqual(Array(10).fill('verfuegbarkeitAnfragen'));
    expect(line.upstream_outcome).toMatch(/^wholesaler_/);
    expect(line.upstream_outcome).not.toBe('ok');
  });

  it('names an error answered before any call, without wholesaler fields', async () => {
    const response = await gw.inject({ url: '/v1/availability/bulk', body: { wholesaler: 'phoenix' } });
    expect(response.statusCode).toBe(400);
    const line = await lineOf(response.headers['x-request-id']);
    expect(line).toMatchObject({ error_kind: 'invalid_request', mode: 'test' });
    expect(line).not.toHaveProperty('msv3_operation');
  });

  it('never writes a key, a password or the PZNs asked for', async () => {
    const response = await availability(PZNS, { username: 'apotheke1', password: 'Geheim-Passwort-4711' });
    await lineOf(response.headers['x-request-id']);
    const all = written.join('');
    for (const secret of [
      gw.keys.test.secret,
      gw.keys.live.secret,
      TEST_CREDENTIALS.password,
      'Geheim-Passwort-4711',
    ])
      expect(all).not.toContain(secret);
    for (const pzn of PZNS) expect(all).not.toContain(pzn);
  });
});
