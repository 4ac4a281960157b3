import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCENARIO_PASSWORDS, SCENARIO_PZNS } from '../src/mock/index.js';
import { type Answer, type ObservedGateway, send, startObservedGateway } from './observed-gateway.js';
import { until } from './until.js';

/**
 * What an operator sees when a pharmacy says "ordering is broken", through real processes: a gateway
 * with WORKERS=2 (a primary and two workers), a mock wholesaler and a port where nothing listens. A
 * rejected wholesaler password, a timeout and an open circuit each show in `GET /metrics` (summed over
 * the workers) and in the request's log line, with an error kind of their own; no log line holds the
 * password, the API key or the PZNs.
 */
const START_MS = 180_000;
const THRESHOLD = 2;
const PASSWORD = 'Apotheke-Passwort-0815';
const STATUS_TOKEN = 'status-token-of-the-operator';

interface LogLine {
  msg: string;
  request_id?: string;
  error_kind?: string;
  wholesaler?: string;
  msv3_operation?: string;
  upstream_outcome?: string;
  upstream_ms?: number;
  account_id?: string;
  key_id?: string;
  mode?: string;
  worker?: number;
  res?: { status: number };
}

describe('wholesaler failures told apart, WORKERS=2', () => {
  let observed: ObservedGateway;
  const answers: Record<'rejected' | 'timeout' | 'circuit', Answer | undefined> = {
    rejected: undefined,
    timeout: undefined,
    circuit: undefined,
  };

  beforeAll(async () => {
    observed = await startObservedGateway(
      {
        WORKERS: '2',
        BREAKER_FAILURE_THRESHOLD: String(THRESHOLD),
        UPSTREAM_HEADERS_TIMEOUT_MS: '500',
        WHOLESALER_PROBE_INTERVAL_MS: '0',
        STATUS_PAGE_TOKEN: STATUS_TOKEN,
      },
      { mock: { lateAnswerMs: 3_000 }, startTimeoutMs: START_MS },
    );
  }, START_MS + 10_000);
  afterAll(() => observed?.close());

  const availability = (wholesaler: string, pzn: string, password = PASSWORD) =>
    send(observed.gateway.url, '/v1/availability', {
      method: 'POST',
      headers: { 'x-api-key': observed.liveKey, 'x-msv3-username': 'apotheke1', 'x-msv3-password': password },
      body: { wholesaler, items: [{ pzn, quantity: 1 }] },
    });

  const logLines = (): LogLine[] =>
    observed.gateway
      .logs()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);

  const lineOf = (answer: Answer | undefined) =>
    until(
      'its log line',
      () =>
        logLines().find(
          (line) => line.msg === 'request completed' && line.request_id === answer?.headers['x-request-id'],
        ),
      10_000,
    );

  it('answers each failure with its own error kind', async () => {
    answers.rejected = await availability('phoenix', '04114918', SCENARIO_PASSWORDS.REJECTED);
    expect(answers.rejected.status).toBe(401);
    expect(JSON.parse(answers.rejected.body)).toMatchObject({ error: 'wholesaler_credentials_rejected' });

    answers.timeout = await availability('phoenix', SCENARIO_PZNS.LATE_ANSWER.pzn);
    expect(answers.timeout.status).toBe(504);
    expect(JSON.parse(answers.timeout.body)).toMatchObject({ error: 'wholesaler_timeout' });

    // Each worker has its own circuit: call until one of them has opened and refuses.
    for (let i = 0; i < 4 * THRESHOLD && answers.circuit === undefined; i++) {
      const answer = await availability('offline', '04114918');
      const kind = (JSON.parse(answer.body) as { error: string }).error;
      expect(['wholesaler_unreachable', 'wholesaler_circuit_open']).toContain(kind);
      if (kind === 'wholesaler_circuit_open') answers.circuit = answer;
    }
    expect(answers.circuit?.status).toBe(503);
  });

  it('shows them in /metrics, summed over the workers', async () => {
    const text = (await send(observed.gateway.url, '/metrics')).body;
    const calls = (wholesaler: string, outcome: string) =>
      new RegExp(
        `msv3_gateway_wholesaler_calls_total\\{wholesaler="${wholesaler}",route="live",operation="verfuegbarkeitAnfragen",outcome="${outcome}"\\} (\\d+)`,
      ).exec(text)?.[1];
    expect(calls('phoenix', 'wholesaler_credentials_rejected')).toBe('1');
    expect(calls('phoenix', 'wholesaler_timeout')).toBe('1');
    expect(text).toContain(
      'msv3_gateway_wholesaler_timeouts_total{wholesaler="phoenix",route="live",operation="verfuegbarkeitAnfragen",phase="headers"} 1',
    );
    expect(Number(calls('offline', 'wholesaler_unreachable'))).toBeGreaterThanOrEqual(THRESHOLD);
    expect(calls('offline', 'wholesaler_circuit_open')).toBe('1');
    expect(
      Number(
        /msv3_gateway_wholesaler_circuit_openings_total\{wholesaler="offline",route="live"\} (\d+)/.exec(
          text,
        )?.[1],
      ),
    ).toBeGreaterThanOrEqual(1);
    expect(
      Number(
        /msv3_gateway_wholesaler_circuits\{wholesaler="offline",route="live",state="open"\} (\d+)/.exec(
          text,
        )?.[1],
      ),
    ).toBeGreaterThanOrEqual(1);
    expect(text).toContain('msv3_gateway_database_up 1');
    expect(text).not.toMatch(/apotheke1|04114918|acct_|key_/);
  });

  it('shows them on the status page, with the calls of every worker', async () => {
    const page = await send(observed.gateway.url, '/status', {
      headers: { authorization: `Bearer ${STATUS_TOKEN}` },
    });
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/data-wholesaler="offline" data-route="live" data-state="down"/);
    expect(page.body).toMatch(/data-wholesaler="phoenix" data-route="live" data-state="up"/);
    // Both phoenix calls failed (the password, the timeout), whichever worker took them.
    const phoenix = /data-wholesaler="phoenix"[\s\S]*?<\/article>/.exec(page.body)?.[0];
    expect(phoenix).toContain('<dt>Last hour</dt><dd>2 calls, 2 failed (100 %)');
  });

  it('names them in the request log lines, with caller, wholesaler and operation', async () => {
    const expected = {
      rejected: 'wholesaler_credentials_rejected',
      timeout: 'wholesaler_timeout',
      circuit: 'wholesaler_circuit_open',
    } as const;
    for (const [name, kind] of Object.entries(expected) as [keyof typeof expected, string][]) {
      const line = await lineOf(answers[name]);
      expect(line, name).toMatchObject({
        res: { status: answers[name]!.status },
        error_kind: kind,
        upstream_outcome: kind,
        wholesaler: name === 'circuit' ? 'offline' : 'phoenix',
        msv3_operation: 'verfuegbarkeitAnfragen',
        mode: 'live',
        account_id: expect.stringMatching(/^acct_/),
        key_id: expect.stringMatching(/^key_/),
        worker: expect.any(Number),
      });
    }
    expect((await lineOf(answers.timeout)).upstream_ms).toBeGreaterThanOrEqual(500);
    const all = observed.gateway.logs() + observed.gateway.output();
    for (const secret of [
      PASSWORD,
      SCENARIO_PASSWORDS.REJECTED,
      observed.liveKey,
      SCENARIO_PZNS.LATE_ANSWER.pzn,
    ])
      expect(all).not.toContain(secret);
  });
});
