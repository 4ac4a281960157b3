/**
 * The gateway against the pass-through at the gateway's own request rate (docs/performance.md "What a
 * lower request rate costs"). A server that answers fewer requests a second pays more per request for
 * the same sockets, so the ratio of the two servers' CPU per request at their own rates overstates what
 * the gateway's code adds. Here the baseline spins the gateway's excess CPU per request (measured in the
 * standard runs just before) in a loop that touches no memory, which brings it to about the gateway's
 * rate; what it spends beyond the spin is what the pass-through costs at that rate. The gateway and the
 * spinning baseline alternate for the same number of runs as the standard scenario.
 */
import { writeWrkScript, wrk } from '../common/wrk.js';
import { cpuRatios, forkChild, measure, median, quantile, type RunResult } from './harness.js';

export interface EqualRate {
  /** The spin per request: the gateway's median CPU per request less the baseline's. */
  spin_us: number;
  /** The spinning baseline's CPU per request less the spin: the pass-through at about the gateway's rate. */
  baseline_at_gateway_rate_us: number;
  /** That less the baseline's own CPU per request at its own rate: what the lower rate costs per request. */
  rate_cost_us: number;
  /** The median of the runs' ratios of the gateway's CPU per request to the baseline's at the gateway's rate. */
  cpu_gateway_over_baseline: number;
  /**
   * The lower and upper quartile of those ratios. The baseline's share is a difference of two larger
   * figures (its CPU less the spin), so the ratios spread far more than either server's CPU does.
   */
  cpu_gateway_over_baseline_quartiles: [number, number];
  runs: { gateway: RunResult[]; spinning_baseline: RunResult[] };
}

export async function measureEqualRate(options: {
  folder: string;
  upstreamArgs: string[];
  answer: string;
  headers: Record<string, string>;
  body: string;
  gateway: { pid: number; url: string; script: string };
  gatewayCpuUs: number;
  baselineCpuUs: number;
  runs: number;
  seconds: number;
  connections: number;
  warmupSeconds: number;
}): Promise<EqualRate> {
  const spin = Math.max(0, Math.round(options.gatewayCpuUs - options.baselineCpuUs));
  const spinning = await forkChild('baseline', [...options.upstreamArgs, `spin=${spin}`]);
  try {
    spinning.child.send({ answer: options.answer });
    await spinning.when('answerSet');
    const url = `http://127.0.0.1:${spinning.port}/v1/availability`;
    const script = writeWrkScript(options.folder, 'spinning-baseline', options.headers, options.body);
    await wrk(url, script, options.warmupSeconds, options.connections);
    const runs: EqualRate['runs'] = { gateway: [], spinning_baseline: [] };
    for (let run = 1; run <= options.runs; run++) {
      const order =
        run % 2 === 1
          ? (['gateway', 'spinning_baseline'] as const)
          : (['spinning_baseline', 'gateway'] as const);
      for (const name of order) {
        const target = name === 'gateway' ? options.gateway : { pid: spinning.child.pid!, url, script };
        const row = await measure(
          `${name} run ${run}`,
          target.pid,
          target.url,
          target.script,
          options.seconds,
          options.connections,
        );
        runs[name].push(row);
        console.log(`[bench] equal rate, run ${run} ${name.padEnd(17)} ${JSON.stringify(row)}`);
      }
    }
    const cpu = (row: RunResult) => row.server_cpu_us_per_request ?? Number.NaN;
    const atGatewayRate = median(runs.spinning_baseline.map((row) => cpu(row) - spin));
    const ratios = cpuRatios(runs.gateway, runs.spinning_baseline, spin);
    if (ratios === null) throw new Error('server CPU per request needs /proc');
    const sorted = [...ratios].sort((a, b) => a - b);
    const rounded = (value: number) => Math.round(value * 100) / 100;
    return {
      spin_us: spin,
      baseline_at_gateway_rate_us: atGatewayRate,
      rate_cost_us: atGatewayRate - options.baselineCpuUs,
      cpu_gateway_over_baseline: rounded(median(ratios)),
      cpu_gateway_over_baseline_quartiles: [rounded(quantile(sorted, 0.25)), rounded(quantile(sorted, 0.75))],
      runs,
    };
  } finally {
    spinning.child.send({ stop: true });
  }
}
