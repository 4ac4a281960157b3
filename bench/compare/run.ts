/**
 * POST /v1/availability/compare (docs/multi-wholesaler.md), measured as latency (docs/performance.md
 * "Comparing wholesalers"):
 *
 * 1. 5 wholesalers × 50 items against five canned upstreams (bench/gateway/upstream.ts, each its own
 *    process on 127.0.0.1) that answer after BENCH_UPSTREAM_DELAY_MS (default 50 ms), against
 *    POST /v1/availability with the same 50 items at one of them, alternating, one request at a time:
 *    the p50 of both and the difference (target: compare at most 10 ms above the single call).
 * 2. The fifth upstream never answers: the compare with `deadline_ms` BENCH_DEADLINE_MS (default 1000)
 *    answers at the deadline with four answers and a timeout (target: within the deadline + 50 ms; p50,
 *    p90 and the slowest of BENCH_HUNG_ROUNDS are reported).
 *
 * The gateway runs as `npm start` runs it (bench/gateway/harness.ts), SQLite, a live key, defaults
 * otherwise. Writes bench/results/compare.json. `npm run bench:compare`.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { va50Articles } from '../codec/envelopes.js';
import { expectEveryArticleAsked } from '../common/availability-answer.js';
import { benchGatewayEnv, createLiveKey } from '../common/gateway.js';
import { CLI, stopAll, stopAndWait, track, untilListening } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { boundedSetting, forkChild, LOG_LEVEL, median, START_NODE_FLAGS } from '../gateway/harness.js';

const DELAY_MS = boundedSetting('BENCH_UPSTREAM_DELAY_MS', 50, 0, 10_000);
const DEADLINE_MS = boundedSetting('BENCH_DEADLINE_MS', 1000, 100, 30_000);
const ROUNDS = boundedSetting('BENCH_ROUNDS', 400, 10, 100_000);
const HUNG_ROUNDS = boundedSetting('BENCH_HUNG_ROUNDS', 20, 1, 1_000);
const WARMUP = 20;
const RESULTS = join(process.cwd(), 'bench', 'results', 'compare.json');
const IDS = ['w1', 'w2', 'w3', 'w4', 'w5'];
const NEVER_MS = '2000000000'; // about 23 days: the upstream never answers while the benchmark runs

const items = va50Articles().map((article) => ({
  pzn: article.pzn.padStart(8, '0'),
  quantity: article.quantity,
}));

async function timed(url: string, headers: Record<string, string>, body: unknown) {
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = (await response.json()) as Record<string, unknown>;
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${JSON.stringify(json)}`);
  return { ms, json };
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-compare-'));
  try {
    const upstreams = await Promise.all(IDS.map(() => forkChild('upstream', [String(DELAY_MS)])));
    const hung = await forkChild('upstream', [NEVER_MS]);
    const env = benchGatewayEnv({
      folder,
      upstream: { baseUrl: 'http://127.0.0.1:1', name: 'unused' },
      databaseFile: 'gateway.db',
      settings: { LOG_LEVEL, RATE_LIMIT_LIVE_POINTS: '1000000', RATE_LIMIT_TEST_POINTS: '1000000' },
    });
    const live = (port: number) => ({ baseUrl: `http://127.0.0.1:${port}/msv3/v2.0` });
    writeFileSync(
      env.WHOLESALER_CATALOGUE!,
      JSON.stringify({
        wholesalers: [
          ...IDS.map((id, i) => ({ id, name: id, version: 2, live: live(upstreams[i]!.port) })),
          { id: 'hung', name: 'never answers', version: 2, live: live(hung.port) },
        ],
      }),
    );
    const key = createLiveKey(env, 'bench');
    const child = track(
      spawn(process.execPath, [...START_NODE_FLAGS, CLI, 'serve'], {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    const base = await untilListening(child, 'gateway', 30_000);
    const logins = [...IDS, 'hung'].map((id) => `${id}=("bench1" "geheim")`).join(', ');
    const headers = {
      'content-type': 'application/json',
      'x-api-key': key,
      'x-msv3-username': 'bench1',
      'x-msv3-password': 'geheim',
      'x-msv3-credentials': logins,
    };
    const single = () => timed(`${base}/v1/availability`, headers, { wholesaler: 'w1', items });
    const compare = (wholesalers: string[]) =>
      timed(`${base}/v1/availability/compare`, headers, { wholesalers, items, deadline_ms: DEADLINE_MS });

    // Correctness first: five answers of 50 items each.
    const first = (await compare(IDS)).json as {
      wholesalers: { status: string; answer: unknown }[];
    };
    if (first.wholesalers.length !== 5 || first.wholesalers.some((w) => w.status !== 'ok')) {
      throw new Error(`compare did not answer 5 × 50 items: ${JSON.stringify(first).slice(0, 500)}`);
    }
    for (const w of first.wholesalers) expectEveryArticleAsked(w.answer, 'compare');
    for (let i = 0; i < WARMUP; i++) {
      await single();
      await compare(IDS);
    }

    const loadBefore = loadavg()[0]!;
    const singleMs: number[] = [];
    const compareMs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Alternating, so both see the same machine.
      singleMs.push((await single()).ms);
      compareMs.push((await compare(IDS)).ms);
    }
    const hungMs: number[] = [];
    for (let i = 0; i < HUNG_ROUNDS; i++) {
      const { ms, json } = await compare([...IDS.slice(0, 4), 'hung']);
      const statuses = (json.wholesalers as { status: string }[]).map((w) => w.status).join(',');
      if (statuses !== 'ok,ok,ok,ok,timeout') throw new Error(`with the hung fifth: ${statuses}`);
      hungMs.push(ms);
    }
    const loadAfter = loadavg()[0]!;
    await stopAndWait(child);

    const p50 = { single: median(singleMs), compare: median(compareMs) };
    const output = {
      benchmark: 'POST /v1/availability/compare, 5 wholesalers × 50 items (bench/compare/run.ts)',
      command: `${DELAY_MS === 50 ? '' : `BENCH_UPSTREAM_DELAY_MS=${DELAY_MS} `}${ROUNDS === 400 ? '' : `BENCH_ROUNDS=${ROUNDS} `}npm run bench:compare`,
      date: new Date().toISOString(),
      load_average: { before: Math.round(loadBefore * 100) / 100, after: Math.round(loadAfter * 100) / 100 },
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version },
      setup: {
        upstreams: `5 node:http processes on 127.0.0.1 answering the canned 50-article v2 verfuegbarkeitAnfragen after ${DELAY_MS} ms; a sixth never answers`,
        gateway: `node ${[...START_NODE_FLAGS, ''].join(' ')}dist/cli.js serve (as npm start), own process, SQLite, live key, LOG_LEVEL=${LOG_LEVEL} to /dev/null, defaults otherwise`,
        load: `one request at a time over fetch (keep-alive), ${WARMUP} warm-up pairs, then ${ROUNDS} pairs alternating single and compare; ${HUNG_ROUNDS} compares with the hung fifth, deadline_ms ${DEADLINE_MS}`,
      },
      results: {
        single_p50_ms: round1(p50.single),
        single_p90_ms: round1(percentile(singleMs, 0.9)),
        compare_p50_ms: round1(p50.compare),
        compare_p90_ms: round1(percentile(compareMs, 0.9)),
        compare_over_single_p50_ms: round1(p50.compare - p50.single),
        hung_fifth: {
          deadline_ms: DEADLINE_MS,
          p50_ms: round1(median(hungMs)),
          p90_ms: round1(percentile(hungMs, 0.9)),
          max_ms: round1(Math.max(...hungMs)),
          max_over_deadline_ms: round1(Math.max(...hungMs) - DEADLINE_MS),
        },
      },
      targets: {
        compare_p50_at_most_10_ms_above_single: p50.compare - p50.single <= 10,
        hung_p50_within_deadline_plus_50_ms: median(hungMs) <= DEADLINE_MS + 50,
        hung_every_answer_within_deadline_plus_50_ms: Math.max(...hungMs) <= DEADLINE_MS + 50,
      },
    };
    writeResults(RESULTS, output);
    console.log(JSON.stringify(output, null, 2));
    for (const forked of [...upstreams, hung]) forked.child.send({ stop: true });
  } finally {
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  stopAll();
  process.exit(1);
});
