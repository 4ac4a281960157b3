/**
 * What each speed-up that doubles logic saves (issue 12): `BENCH_FAST_PATHS=1 npm run bench:gateway`.
 *
 * The issue 4 scenario of run.ts (`POST /v1/availability` with 50 items, wrk `-t1 -c32`, the canned
 * upstream answering at once) against one gateway per variant, each its own process started as
 * `npm start` starts it, with its own SQLite database:
 *  - `all on`: the defaults;
 *  - `decoding off`: FAST_PATH_DECODING=false (every answer through `parseXml` and the general decoder);
 *  - `serializer off`: FAST_PATH_SERIALIZER=false (fast-json-stringify alone).
 * All three must answer the same bytes. After a warm-up of 5 s each, BENCH_ROUNDS (7) rounds of
 * BENCH_SECONDS (10) s per variant; the order changes every round (rotated, and reversed every other
 * turn), so a slow spell of the shared machine falls on each variant alike. Each round also gives a
 * paired saving per speed-up, from measurements at most a minute apart:
 *   saving = (CPU per request with it off − CPU per request all on) ÷ CPU per request with it off,
 * the share of the gateway's CPU per request that goes when the speed-up is added. A speed-up stays when
 * it saves at least 5 %: the verdict is `keep` when the lower quartile of the round savings is ≥ 5 %,
 * `remove` when the upper quartile is < 5 %, and `inconclusive` otherwise (then run more rounds).
 * Also recorded: the 1-minute load average before each measurement and the spread of the all-on CPU
 * per request over the rounds. Writes bench/results/gateway-fast-paths.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWatchdog, stopAll, stopAndWait } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { writeWrkScript, wrk, wrkVersion } from '../common/wrk.js';
import {
  availabilityBody,
  availabilityHeaders,
  boundedSetting,
  forkChild,
  type Gateway,
  measure,
  median,
  medians,
  post,
  quantile,
  type RunResult,
  START_NODE_FLAGS,
  startGateway,
} from './harness.js';

const RESULTS = join(process.cwd(), 'bench', 'results', 'gateway-fast-paths.json');
const CONNECTIONS = 32;
const WARMUP_SECONDS = 5;
const THRESHOLD = 0.05;

const VARIANTS = [
  { name: 'all on', env: {} },
  { name: 'decoding off', env: { FAST_PATH_DECODING: 'false' } },
  { name: 'serializer off', env: { FAST_PATH_SERIALIZER: 'false' } },
] as const;
type VariantName = (typeof VARIANTS)[number]['name'];

const SPEED_UPS = [
  {
    name: 'decoding fast path (readResponsePlain, src/msv3/xml/plain.ts)',
    switch: 'FAST_PATH_DECODING',
    off: 'decoding off',
  },
  {
    name: 'generated JSON serializer (src/http/serializer.ts)',
    switch: 'FAST_PATH_SERIALIZER',
    off: 'serializer off',
  },
] as const satisfies readonly { name: string; switch: string; off: VariantName }[];

export async function measureFastPaths(): Promise<void> {
  const rounds = boundedSetting('BENCH_ROUNDS', 7, 5, 25);
  const seconds = boundedSetting('BENCH_SECONDS', 10, 3, 60);
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-fast-paths-'));
  // The whole benchmark stops itself after this, whatever happens.
  const watchdogMs = (rounds * VARIANTS.length * (seconds + 2) + 180) * 1000;
  const stopWatchdog = startWatchdog(watchdogMs);
  try {
    const upstream = await forkChild('upstream', ['0']);
    const upstreamBase = `http://127.0.0.1:${upstream.port}/msv3/v2.0`;
    const gateways = {} as Record<VariantName, Gateway>;
    for (const [i, variant] of VARIANTS.entries())
      gateways[variant.name] = await startGateway(join(folder, `gateway-${i}`), upstreamBase, {
        env: variant.env,
      });

    const body = availabilityBody();
    const scripts = {} as Record<VariantName, string>;
    let answer: string | undefined;
    for (const [i, { name }] of VARIANTS.entries()) {
      const headers = availabilityHeaders(gateways[name].key);
      scripts[name] = writeWrkScript(folder, `variant-${i}`, headers, body);
      // Correctness first: every variant answers the very same bytes.
      const text = await post(`${gateways[name].url}/v1/availability`, headers, body);
      if ((JSON.parse(text) as { items: unknown[] }).items.length !== 50)
        throw new Error(`${name}: the gateway did not map all 50 articles`);
      answer ??= text;
      if (text !== answer)
        throw new Error(`${name}: the gateway answers other bytes than with all speed-ups on`);
    }
    const urlOf = (name: VariantName) => `${gateways[name].url}/v1/availability`;

    console.log(
      `[bench] fast paths: warm-up ${WARMUP_SECONDS} s each, then ${rounds} rounds of ${seconds} s`,
    );
    for (const { name } of VARIANTS) await wrk(urlOf(name), scripts[name], WARMUP_SECONDS, CONNECTIONS);

    const runs = Object.fromEntries(VARIANTS.map((v) => [v.name, [] as RunResult[]])) as Record<
      VariantName,
      RunResult[]
    >;
    const orders: VariantName[][] = [];
    for (let round = 0; round < rounds; round++) {
      const order = roundOrder(round);
      orders.push(order);
      for (const name of order) {
        const pid = gateways[name].child.pid!;
        const row = await measure(
          `${name} round ${round + 1}`,
          pid,
          urlOf(name),
          scripts[name],
          seconds,
          CONNECTIONS,
        );
        runs[name].push(row);
        console.log(`[bench] round ${round + 1} ${name.padEnd(14)} ${JSON.stringify(row)}`);
      }
    }

    const cpu = (name: VariantName) => runs[name].map((r) => r.server_cpu_us_per_request ?? Number.NaN);
    const allOn = cpu('all on');
    if (allOn.some(Number.isNaN)) throw new Error('no CPU times: this benchmark needs /proc (Linux)');
    const speedUps = SPEED_UPS.map((speedUp) => {
      const off = cpu(speedUp.off);
      const roundSavings = off.map((o, r) => (o - allOn[r]!) / o);
      const sorted = [...roundSavings].sort((a, b) => a - b);
      const [low, high] = [quantile(sorted, 0.25), quantile(sorted, 0.75)];
      const verdict = low >= THRESHOLD ? 'keep' : high < THRESHOLD ? 'remove' : 'inconclusive';
      return {
        speed_up: speedUp.name,
        switch: `${speedUp.switch}=false`,
        cpu_us_per_request_median: { on: median(allOn), off: median(off) },
        saving_of_medians_percent: percent((median(off) - median(allOn)) / median(off)),
        round_savings_percent: roundSavings.map(percent),
        round_saving_median_percent: percent(quantile(sorted, 0.5)),
        round_saving_quartiles_percent: [percent(low), percent(high)],
        round_saving_range_percent: [percent(sorted[0]!), percent(sorted.at(-1)!)],
        verdict,
      };
    });
    const loads = Object.values(runs).flatMap((rs) => rs.map((r) => r.load_average));
    const output = {
      benchmark:
        'fast paths: gateway CPU per request with each speed-up on and off (bench/gateway/fast-paths.ts)',
      command: `BENCH_FAST_PATHS=1${rounds === 7 ? '' : ` BENCH_ROUNDS=${rounds}`}${seconds === 10 ? '' : ` BENCH_SECONDS=${seconds}`} npm run bench:gateway`,
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, wrk: wrkVersion() },
      setup: {
        load: `wrk -t1 -c${CONNECTIONS} -d${seconds}s, ${rounds} rounds after a ${WARMUP_SECONDS} s warm-up each, variants alternating, medians`,
        request: `${Buffer.byteLength(body)} B JSON, 50 items; answer ${Buffer.byteLength(answer!)} B, the same bytes from every variant`,
        upstream: `node:http on 127.0.0.1, ${upstream.bytes} B canned v2 verfuegbarkeitAnfragen answer, at once`,
        gateways: `one process per variant: node ${START_NODE_FLAGS.join(' ')} dist/cli.js serve, SQLite, LOG_LEVEL=info to /dev/null, defaults otherwise`,
        saving: '(CPU per request with the speed-up off - all on) / CPU per request with it off, per round',
        threshold_percent: THRESHOLD * 100,
      },
      load_average: { min: Math.min(...loads), median: median(loads), max: Math.max(...loads) },
      noise: {
        all_on_cpu_us_per_request_range: [Math.min(...allOn), Math.max(...allOn)],
        all_on_spread_percent: percent((Math.max(...allOn) - Math.min(...allOn)) / median(allOn)),
      },
      median: Object.fromEntries(VARIANTS.map((v) => [v.name, medians(runs[v.name])])),
      speed_ups: speedUps,
      orders,
      runs,
    };
    writeResults(RESULTS, output);
    printSummary(output.median, speedUps, output.load_average, output.noise, rounds);
    console.log(`[bench] wrote ${RESULTS}`);

    for (const { name } of VARIANTS) await stopAndWait(gateways[name].child);
    upstream.child.send({ stop: true });
  } finally {
    stopWatchdog();
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Round r runs the variants rotated by r, reversed in every other turn of three rounds. */
function roundOrder(round: number): VariantName[] {
  const names = VARIANTS.map((v) => v.name);
  const rotated = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
  return Math.floor(round / names.length) % 2 === 1 ? rotated.reverse() : rotated;
}

const percent = (share: number) => Math.round(share * 1000) / 10;

function printSummary(
  median: Record<string, RunResult>,
  speedUps: {
    speed_up: string;
    switch: string;
    cpu_us_per_request_median: { on: number; off: number };
    saving_of_medians_percent: number;
    round_saving_median_percent: number;
    round_saving_quartiles_percent: number[];
    round_saving_range_percent: number[];
    verdict: string;
  }[],
  load: { min: number; median: number; max: number },
  noise: { all_on_spread_percent: number },
  rounds: number,
): void {
  console.log('');
  console.log(
    `POST /v1/availability, 50 items, wrk -t1 -c${CONNECTIONS}; medians of ${rounds} rounds; load average ${load.min}–${load.max} (median ${load.median}); all-on CPU per request spread ${noise.all_on_spread_percent} % over the rounds`,
  );
  for (const [name, m] of Object.entries(median))
    console.log(
      `${name.padEnd(16)} ${String(m.server_cpu_us_per_request).padStart(5)} µs CPU/request  ${String(m.requests_per_second).padStart(6)} req/s  p50 ${m.p50_us} µs`,
    );
  for (const s of speedUps)
    console.log(
      `${s.speed_up}: ${s.cpu_us_per_request_median.off} → ${s.cpu_us_per_request_median.on} µs, saves ${s.saving_of_medians_percent} % (rounds: median ${s.round_saving_median_percent} %, quartiles ${s.round_saving_quartiles_percent.join(' … ')} %, range ${s.round_saving_range_percent.join(' … ')} %): ${s.verdict.toUpperCase()}`,
    );
}
