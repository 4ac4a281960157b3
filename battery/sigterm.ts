import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { baseEnv, provisionKeys, startGateway } from './gateway.js';
import { call, type Outcome } from './http.js';
import { duration, type Row, row } from './report.js';

/**
 * SIGTERM while clients wait on fast, slow (1 s) and late (20 s, longer than SHUTDOWN_TIMEOUT_MS)
 * wholesaler answers: every request in flight at the signal must get an HTTP answer, new connections
 * meanwhile get 503 with Retry-After and `Connection: close` (docs/operating.md "Health probes"), and
 * the process must exit within SHUTDOWN_TIMEOUT_MS + 1 s.
 */

const SHUTDOWN_TIMEOUT_MS = 3_000;

interface Tracked {
  startedAt: number;
  outcome?: Outcome;
}

export async function sigtermCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-sigterm-'));
  try {
    const databaseUrl = await ctx.postgres.createDatabase('sigterm');
    const keys = await provisionKeys(databaseUrl);
    const gateway = await startGateway(
      {
        ...baseEnv(databaseUrl),
        WHOLESALER_CATALOGUE: writeLoopbackCatalogue(folder, [{ id: 'phoenix', version: 2 }]),
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        RATE_LIMIT_TEST_POINTS: '100000',
        MOCK_SLOW_ANSWER_MS: '1000',
        MOCK_LATE_ANSWER_MS: '20000',
      },
      ctx.gateways,
    );
    const agent = new Agent({ connections: 100 });
    const tracked: Tracked[] = [];
    let signalAt = Number.POSITIVE_INFINITY;
    const availability = (pzn: string) => ({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': keys.test,
        'x-msv3-username': 'apotheke1',
        'x-msv3-password': 'sigterm-secret',
      },
      body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn, quantity: 1 }] }),
    });
    const kinds = [
      () =>
        call(`${gateway.url}/v1/wholesalers`, {
          headers: { 'x-api-key': keys.test },
          timeoutMs: 30_000,
          agent,
        }),
      () => call(`${gateway.url}/v1/availability`, { ...availability('04114918'), timeoutMs: 30_000, agent }),
      () =>
        call(`${gateway.url}/v1/availability`, {
          ...availability(SCENARIO_PZNS.SLOW_ANSWER.pzn),
          timeoutMs: 30_000,
          agent,
        }),
      () =>
        call(`${gateway.url}/v1/availability`, {
          ...availability(SCENARIO_PZNS.LATE_ANSWER.pzn),
          timeoutMs: 30_000,
          agent,
        }),
    ];
    const clients = Array.from({ length: 24 }, async (_, i) => {
      while (performance.now() < signalAt) {
        const entry: Tracked = { startedAt: performance.now() };
        tracked.push(entry);
        entry.outcome = await kinds[i % kinds.length]!();
        if (entry.outcome.ok === false && performance.now() >= signalAt) break;
      }
    });
    await sleep(3_000);
    signalAt = performance.now();
    gateway.child.kill('SIGTERM');
    const drainAnswers = probeTheDrain(gateway.url, gateway.exited);
    const exitCode = await Promise.race([
      gateway.exited,
      sleep(SHUTDOWN_TIMEOUT_MS + 8_000).then(() => 'still running'),
    ]);
    const drain = await drainAnswers;
    const exitMs = performance.now() - signalAt;
    await Promise.all(clients);
    await agent.close();
    if (gateway.exit() === undefined) await gateway.kill();

    const inFlight = tracked.filter(
      (t) => t.startedAt < signalAt && (t.outcome === undefined || t.outcome.ms + t.startedAt > signalAt),
    );
    const unanswered = inFlight.filter((t) => t.outcome === undefined || !t.outcome.ok);
    const statuses = new Map<string, number>();
    for (const t of inFlight) {
      const label =
        t.outcome === undefined ? 'none' : t.outcome.ok ? String(t.outcome.status) : t.outcome.failure;
      statuses.set(label, (statuses.get(label) ?? 0) + 1);
    }
    const bound = SHUTDOWN_TIMEOUT_MS + 1_000;
    const drainLabels = new Map<string, number>();
    for (const outcome of drain) {
      const label = !outcome.ok
        ? outcome.failure
        : `${outcome.status}${outcome.status === 503 && !drained503(outcome) ? ' without Retry-After / Connection: close' : ''}`;
      drainLabels.set(label, (drainLabels.get(label) ?? 0) + 1);
    }
    const firstRefused = drain.findIndex((outcome) => !outcome.ok);
    const answered503 = drain.filter((outcome) => outcome.ok && outcome.status === 503);
    return [
      row(
        'SIGTERM: in-flight requests answered',
        `${inFlight.length} in flight at SIGTERM: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}`,
        unanswered.length === 0 && inFlight.length > 0,
        `${unanswered.length} clients lost their connection without an HTTP answer`,
      ),
      row(
        'SIGTERM: new connections answered 503 while draining',
        `${drain.length} readiness probes on new connections from SIGTERM to exit: ${[...drainLabels].map(([s, n]) => `${n} × ${s}`).join(', ')}`,
        answered503.length > 0 &&
          answered503.every(drained503) &&
          // Refused only at the end, once the requests in flight were answered and the listener closed.
          (firstRefused === -1 || drain.slice(firstRefused).every((outcome) => !outcome.ok)),
        'a new connection was refused or answered without 503, Retry-After and Connection: close while requests were still in flight',
      ),
      row(
        'SIGTERM: exit within SHUTDOWN_TIMEOUT_MS + 1 s',
        `exit ${exitCode} after ${duration(exitMs)} (SHUTDOWN_TIMEOUT_MS ${SHUTDOWN_TIMEOUT_MS} ms, bound ${duration(bound)})`,
        exitMs <= bound && gateway.exit() !== undefined,
        'shutdown overran SHUTDOWN_TIMEOUT_MS',
      ),
    ];
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * `GET /v1/health/ready` every 100 ms, each on a new connection, from SIGTERM until the process exits
 * (the first probes may still find it serving: the signal takes a moment to arrive).
 */
async function probeTheDrain(url: string, exited: Promise<string>): Promise<Outcome[]> {
  let over = false;
  void exited.then(() => {
    over = true;
  });
  const outcomes: Outcome[] = [];
  let seen503 = false;
  while (!over) {
    const agent = new Agent({ connections: 1 });
    const outcome = await call(`${url}/v1/health/ready`, { timeoutMs: 5_000, agent });
    await agent.close();
    seen503 ||= outcome.ok && outcome.status === 503;
    // Answers from before the signal arrived are not the drain's.
    if (seen503 || !outcome.ok) outcomes.push(outcome);
    await sleep(100);
  }
  return outcomes;
}

function drained503(outcome: Outcome): boolean {
  return (
    outcome.ok &&
    outcome.status === 503 &&
    outcome.headers['retry-after'] === '1' &&
    outcome.headers.connection === 'close' &&
    outcome.body.includes('"error":"service_unavailable"')
  );
}
