import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { errorKindOf, errorShapeProblem, retryAfterProblem } from './error-shape.js';
import { baseEnv, provisionKeys, startGateway } from './gateway.js';
import { call } from './http.js';
import { duration, type Row, row } from './report.js';

/**
 * More calls to one wholesaler than UPSTREAM_MAX_CONCURRENCY lets through (2, each answer held 1 s):
 * the extra ones are the gateway's own overload rejections. Every client must get an answer in the
 * error shape (503 with Retry-After, never 500), and the rejections must not count as the wholesaler
 * failing: a normal call right afterwards is answered, not refused by an open circuit.
 */

const BURST = 60;

export async function overloadCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-overload-'));
  try {
    const databaseUrl = await ctx.postgres.createDatabase('overload');
    const keys = await provisionKeys(databaseUrl);
    const gateway = await startGateway(
      {
        ...baseEnv(databaseUrl),
        WHOLESALER_CATALOGUE: writeLoopbackCatalogue(folder, [{ id: 'phoenix', version: 2 }]),
        RATE_LIMIT_TEST_POINTS: '100000',
        UPSTREAM_MAX_CONCURRENCY: '2',
        MOCK_SLOW_ANSWER_MS: '1000',
        BREAKER_FAILURE_THRESHOLD: '5',
      },
      ctx.gateways,
    );
    const availability = (pzn: string) =>
      call(`${gateway.url}/v1/availability`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': keys.test,
          'x-msv3-username': 'apotheke1',
          'x-msv3-password': 'overload-secret',
        },
        body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn, quantity: 1 }] }),
        timeoutMs: 30_000,
      });
    const started = performance.now();
    const burst = await Promise.all(
      Array.from({ length: BURST }, () => availability(SCENARIO_PZNS.SLOW_ANSWER.pzn)),
    );
    const burstMs = performance.now() - started;
    const after = await availability('04114918');
    const flood = await floodOfClients(gateway.url, keys.test, ctx.short ? 150 : 400);
    await gateway.kill();

    const labels = new Map<string, number>();
    const problems: string[] = [];
    for (const outcome of burst) {
      const label = outcome.ok
        ? `${outcome.status}${outcome.status === 200 ? '' : ` ${errorKindOf(outcome.body) ?? '?'}`}`
        : outcome.failure;
      labels.set(label, (labels.get(label) ?? 0) + 1);
      if (!outcome.ok) problems.push(`no answer (${outcome.failure})`);
      else if (outcome.status >= 400) {
        const problem =
          errorShapeProblem(outcome.status, outcome.body) ??
          retryAfterProblem(outcome.status, outcome.headers['retry-after']);
        if (problem !== undefined) problems.push(problem);
        if (outcome.status === 500) problems.push('500');
      }
    }
    const afterLabel = after.ok
      ? `${after.status}${after.status === 200 ? '' : ` ${errorKindOf(after.body) ?? '?'}`}`
      : after.failure;
    return [
      row(
        'overload: rejections answered',
        `${BURST} calls at once through 2 upstream slots, answered in ${duration(burstMs)}: ${[...labels].map(([l, n]) => `${n} × ${l}`).join(', ')}`,
        problems.length === 0,
        problems.slice(0, 3).join('; '),
      ),
      flood,
      row(
        'overload: circuit stays closed',
        `a normal call right after the burst: ${afterLabel}`,
        after.ok && after.status === 200,
        'the gateway counted its own overload rejections as wholesaler failures',
      ),
    ];
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * `clients` at once (400; short form 150), each on its own connection: the gateway may shed load (503 with Retry-After) or
 * queue, but every client gets an answer in the error shape, none is reset or left waiting 30 s.
 */
async function floodOfClients(url: string, apiKey: string, clients: number): Promise<Row> {
  const agent = new Agent({ connections: clients, pipelining: 0 });
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: clients }, () =>
      call(`${url}/v1/availability`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': apiKey,
          'x-msv3-username': 'apotheke1',
          'x-msv3-password': 'overload-secret',
        },
        body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 1 }] }),
        timeoutMs: 30_000,
        agent,
      }),
    ),
  );
  const elapsed = performance.now() - started;
  await agent.close();
  const labels = new Map<string, number>();
  const problems: string[] = [];
  const times = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  for (const outcome of outcomes) {
    const label = outcome.ok
      ? `${outcome.status}${outcome.status === 200 ? '' : ` ${errorKindOf(outcome.body) ?? '?'}`}`
      : outcome.failure;
    labels.set(label, (labels.get(label) ?? 0) + 1);
    if (!outcome.ok) problems.push(`no answer (${outcome.failure})`);
    else if (outcome.status >= 400) {
      const problem =
        errorShapeProblem(outcome.status, outcome.body) ??
        retryAfterProblem(outcome.status, outcome.headers['retry-after']);
      if (problem !== undefined || outcome.status === 500) problems.push(problem ?? '500');
    }
  }
  return row(
    `overload: ${clients} clients at once`,
    `${[...labels].map(([l, n]) => `${n} × ${l}`).join(', ')} in ${duration(elapsed)}; p50 ${duration(times[Math.floor(clients / 2)] ?? 0)}, max ${duration(times.at(-1) ?? 0)}`,
    problems.length === 0,
    problems.slice(0, 3).join('; '),
  );
}
