import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { SCENARIO_PASSWORDS, SCENARIO_PZNS } from '../src/mock/index.js';
import { createLogger } from '../src/observability/logger.js';
import { startTracing } from '../src/observability/start-tracing.js';
import type { Tracing } from '../src/observability/tracing.js';
import { parseCatalogue } from '../src/wholesalers/catalogue.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { type Gateway, startGateway, TEST_CATALOGUE } from './gateway.js';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.js';

/**
 * The passwords of X-MSV3-Credentials (docs/multi-wholesaler.md) reach the wholesalers and nothing else:
 * after comparisons that succeed, fail at a wholesaler (a rejected login, a fault, a timeout) and are
 * refused (a malformed member), neither the log lines, the answers, `GET /metrics`, the exported spans
 * nor the database files hold any password or a Basic-auth token built from one.
 */

const USER = 'comparepharmacy1';
const PASSWORD = 'Cmp#Secret-7731!q';
/** UTF-8, sent as a byte sequence. */
const UMLAUT_PASSWORD = 'Apotheke-Süd:Geheim-44';
const MALFORMED_MEMBER_PASSWORD = 'Never-Echo-9183%z';

const basic = (password: string) => Buffer.from(`${USER}:${password}`, 'utf8').toString('base64');
const SECRETS = [
  PASSWORD,
  UMLAUT_PASSWORD,
  MALFORMED_MEMBER_PASSWORD,
  SCENARIO_PASSWORDS.REJECTED,
  basic(PASSWORD),
  basic(UMLAUT_PASSWORD),
  basic(SCENARIO_PASSWORDS.REJECTED),
];

describe('X-MSV3-Credentials passwords stay out of logs, answers, metrics, spans and storage', () => {
  let receiver: OtlpReceiver;
  let database: TestDatabase;
  let tracing: Tracing;
  let gw: Gateway;
  const logLines: string[] = [];
  const bodies: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    database = await createTestDatabase('sqlite');
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ level: 'trace', destination });
    tracing = await startTracing(config.tracing, { logger, version: 'test' });
    gw = await startGateway({
      database,
      tracing,
      logger,
      mockOptions: { sandbox: { lateAnswerMs: 2_000 } },
      catalogue: (mocks, closed) => [
        ...TEST_CATALOGUE(mocks, closed),
        ...parseCatalogue({
          wholesalers: ['alliance', 'noweda'].map((id) => ({ id, name: id, version: 2 })),
        }),
      ],
    });
  });
  afterAll(async () => {
    await gw?.close();
    await tracing?.close();
    await database?.dispose();
    await receiver?.close();
  });

  const compare = async (header: string, wholesalers: string[], pzn: string, deadline_ms = 5000) => {
    const response = await gw.inject({
      url: '/v1/availability/compare',
      credentials: null,
      headers: { 'x-msv3-credentials': header },
      body: { wholesalers, items: [{ pzn, quantity: 2 }], deadline_ms },
    });
    bodies.push(response.body);
    return response;
  };

  it('compares, fails at wholesalers and refuses, without a password anywhere', async () => {
    const good = `phoenix=("${USER}" "${PASSWORD}"), alliance=:${basic(UMLAUT_PASSWORD)}:`;
    const answered = await compare(
      `${good}, noweda=("${USER}" "${SCENARIO_PASSWORDS.REJECTED}")`,
      ['phoenix', 'alliance', 'noweda'],
      '04114918',
    );
    expect(answered.statusCode).toBe(200);
    expect(answered.json().wholesalers.map((w: { status: string }) => w.status)).toEqual([
      'ok',
      'ok',
      'error',
    ]);
    expect(answered.json().wholesalers[2].error).toMatchObject({
      kind: 'wholesaler_credentials_rejected',
      message: expect.stringContaining('its X-MSV3-Credentials member'),
    });
    // The passwords really travelled: the sandbox answered phoenix and alliance, each with its own login.
    expect(gw.mocks.sandbox.requestCount('verfuegbarkeitAnfragen')).toBeGreaterThanOrEqual(2);

    const faulted = await compare(
      `${good}, noweda=("${USER}" "${PASSWORD}")`,
      ['noweda', 'phoenix'],
      SCENARIO_PZNS.DOWN_AT_NOWEDA.pzn,
    );
    expect(faulted.json().wholesalers[0].error.kind).toBe('wholesaler_fault');

    const late = await compare(good, ['phoenix', 'alliance'], SCENARIO_PZNS.LATE_ANSWER.pzn, 200);
    expect(late.json().wholesalers.map((w: { status: string }) => w.status)).toEqual(['timeout', 'timeout']);

    const refused = await compare(
      `phoenix=("${USER}" "${PASSWORD}"), alliance=("bad user!" "${MALFORMED_MEMBER_PASSWORD}")`,
      ['phoenix', 'alliance'],
      '04114918',
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'wholesaler_credentials_missing', wholesaler: 'alliance' });
    expect(refused.json().message).toContain('user name');
  });

  it('left no password in the answers', () => {
    const all = bodies.join('\n');
    for (const secret of SECRETS) expect(all.includes(secret), `answers contain ${secret}`).toBe(false);
  });

  it('left no password in the log lines', () => {
    const logs = logLines.join('');
    expect(logs).toContain('/v1/availability/compare');
    for (const secret of SECRETS) expect(logs.includes(secret), `logs contain ${secret}`).toBe(false);
    expect(logs.toLowerCase()).not.toContain('x-msv3-credentials":"');
  });

  it('left no password in the metrics', async () => {
    const metrics = await gw.inject({ url: '/metrics', key: null, credentials: null });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('verfuegbarkeitAnfragen');
    for (const secret of SECRETS)
      expect(metrics.body.includes(secret), `metrics contain ${secret}`).toBe(false);
  });

  it('left no password in the exported spans', async () => {
    await tracing.flush();
    const spans = await receiver.waitFor(
      (all) => all.filter((span) => span.name === 'msv3 verfuegbarkeitAnfragen').length >= 5,
      15_000,
    );
    const text = JSON.stringify(spans);
    for (const secret of SECRETS) expect(text.includes(secret), `spans contain ${secret}`).toBe(false);
  });

  it('left no password in the database files', () => {
    const file = database.url.slice('sqlite:'.length);
    const folder = dirname(file);
    const stored = readdirSync(folder)
      .map((name) => readFileSync(join(folder, name)).toString('latin1'))
      .join('\n');
    expect(stored.length).toBeGreaterThan(0);
    for (const secret of SECRETS) expect(stored.includes(secret), `database contains ${secret}`).toBe(false);
    // Latin-1 reading of the UTF-8 bytes, too.
    const utf8AsLatin1 = Buffer.from(UMLAUT_PASSWORD, 'utf8').toString('latin1');
    expect(stored.includes(utf8AsLatin1)).toBe(false);
  });
});
