import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.js';
import { SOAP12_NS } from '../src/msv3/envelope.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import {
  type GatewayProcess,
  gatewayProcessEnv,
  killAndWait,
  startGatewayProcess,
  writePhoenixCatalogue,
} from './gateway-process.js';
import { until } from './until.js';

/**
 * Issue 11, defect 3 ("one hostile answer freezes every tenant"): a wholesaler's answer built to make
 * the XML parser slow (an element with 100,000 attributes took 28 s before) must neither block the
 * gateway nor be decoded: through a real gateway process, a loopback wholesaler answers an availability
 * call with such a bomb; the client gets 502 wholesaler_bad_response naming the parser's cap, and
 * `/v1/health`, polled every 20 ms meanwhile (from ten polls before the call to ten after its answer),
 * keeps answering. docs/resilience.md "Hostile answers".
 *
 * Each poll's latency is printed; asserted are a median under 100 ms and a maximum under 2 s: a
 * parser that blocks the event loop holds every poll for seconds to minutes (28 s before the caps),
 * while on a 2-core machine loaded by other work a single poll was seen to take 700 ms without any
 * block. The latency target itself is measured where timings belong, in the battery.
 */

const START_MS = 90_000;
const POLL_EVERY_MS = 20;
/** Polls answered before the call is sent, and after its answer, so that the polls span the call. */
const POLLS_AROUND = 10;
const MEDIAN_BOUND_MS = 100;
const MAX_BOUND_MS = 2_000;

function envelope(body: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${SOAP12_NS}" xmlns:m="urn:msv3:v2">` +
    `<env:Body>${body}</env:Body></env:Envelope>`
  );
}

const many = (n: number, unit: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => unit(i)).join('');

/** The hostile answers: what each holds, its text, and the cap its 502 must name. */
const BOMBS: [string, () => string, string][] = [
  [
    'an element with 100,000 attributes (the issue)',
    () => envelope(`<m:verfuegbarkeitAnfragenResponse${many(100_000, (i) => ` a${i}="1"`)}/>`),
    'maxAttributes',
  ],
  [
    'elements nested 300,000 deep',
    () => envelope(`${'<m:a>'.repeat(300_000)}${'</m:a>'.repeat(300_000)}`),
    'maxDepth',
  ],
  ['a million sibling elements', () => envelope(`<m:r>${'<b/>'.repeat(1_000_000)}</m:r>`), 'maxElements'],
  ['a text of 4 million characters', () => envelope(`<m:r>${'x'.repeat(4_000_000)}</m:r>`), 'maxTextLength'],
];

interface Poll {
  ms: number;
  status: number;
}

/**
 * GET /v1/health every POLL_EVERY_MS (one at a time) into `polls`, from now until POLLS_AROUND polls
 * after `answered()` holds; the latency of each.
 */
async function pollHealth(url: string, polls: Poll[], answered: () => boolean): Promise<Poll[]> {
  for (let after = 0; after < POLLS_AROUND; ) {
    const start = performance.now();
    const response = await fetch(`${url}/v1/health`);
    await response.arrayBuffer();
    polls.push({ ms: performance.now() - start, status: response.status });
    if (answered()) after++;
    await delay(POLL_EVERY_MS); // the pace of a monitoring client, not a wait for anything
  }
  return polls;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describe('hostile wholesaler answers', () => {
  let folder: string;
  let wholesaler: Server;
  let gateway: GatewayProcess;
  let apiKey: string;
  /** What the loopback wholesaler answers to every call. */
  let answer = '';
  let calls = 0;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-hostile-'));
    wholesaler = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls++;
        res.writeHead(200, { 'content-type': 'application/soap+xml; charset=utf-8' }).end(answer);
      });
    });
    await new Promise<void>((resolve) => wholesaler.listen(0, '127.0.0.1', resolve));
    const { port } = wholesaler.address() as AddressInfo;
    const catalogue = writePhoenixCatalogue(folder, `http://127.0.0.1:${port}/msv3/v2.0`);
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    const database = await openDatabase(databaseUrl);
    await migrateToLatest(database);
    const account = await createAccount(database.db, systemClock, { name: 'Apotheke am Markt' });
    apiKey = (
      await createApiKey(database.db, systemClock, { accountId: account.id, name: 'hostile', mode: 'test' })
    ).secret;
    await database.close();
    gateway = await startGatewayProcess(
      gatewayProcessEnv(databaseUrl, {
        WHOLESALER_CATALOGUE: catalogue,
        ALLOW_PRIVATE_ENDPOINTS: 'true',
      }),
      children,
      START_MS,
    );
  }, START_MS + 30_000);

  afterAll(async () => {
    for (const child of children) await killAndWait(child);
    wholesaler?.closeAllConnections();
    await new Promise((resolve) => wholesaler?.close(resolve) ?? resolve(undefined));
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it.each(BOMBS)(
    'refuses %s with a 502 in milliseconds, and /v1/health keeps answering',
    {
      timeout: 60_000,
    },
    async (kind, make, cap) => {
      answer = make();
      const callsBefore = calls;
      let answered = false;
      const polled: Poll[] = [];
      const polling = pollHealth(gateway.url, polled, () => answered);
      await until('health polls before the call', () => polled.length >= POLLS_AROUND, 30_000);
      const availability = fetch(`${gateway.url}/v1/availability`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': apiKey,
          'x-msv3-username': 'apotheke1',
          'x-msv3-password': 'hostile-secret',
        },
        body: JSON.stringify({ wholesaler: 'phoenix_test', items: [{ pzn: '4114918', quantity: 1 }] }),
      });
      const started = performance.now();
      const response = await availability.finally(() => {
        answered = true;
      });
      const tookMs = performance.now() - started;
      const body = (await response.json()) as { error?: string; message?: string };
      const polls = await polling;
      const latencies = polls.map((p) => p.ms);
      console.info(
        `${kind} (${(answer.length / 1024 / 1024).toFixed(1)} MB): ${response.status} ${body.error} in ` +
          `${tookMs.toFixed(0)} ms; ${polls.length} health polls, median ${median(latencies).toFixed(1)} ms, ` +
          `max ${Math.max(...latencies).toFixed(1)} ms: ${latencies.map((ms) => ms.toFixed(0)).join(' ')}; ${body.message}`,
      );
      expect(calls).toBeGreaterThan(callsBefore);
      expect(response.status).toBe(502);
      expect(body.error).toBe('wholesaler_bad_response');
      expect(body.message).toContain(cap);
      expect(body.message!.length).toBeLessThan(400);
      expect(polls.length).toBeGreaterThan(0);
      expect(polls.every((p) => p.status === 200)).toBe(true);
      expect(median(latencies)).toBeLessThan(MEDIAN_BOUND_MS);
      expect(Math.max(...latencies)).toBeLessThan(MAX_BOUND_MS);
    },
  );
});
