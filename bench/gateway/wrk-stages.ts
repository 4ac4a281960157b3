/**
 * The stages of a request under wrk (`BENCH_CPU_PROF=<dir> npm run bench:gateway`): each server of the
 * run writes a V8 CPU profile (`--cpu-prof`, a sample every PROFILE_INTERVAL_US) into its own folder, and
 * its samples are added up per stage by the ledger's rules (stages.ts). A stage's µs are its share of
 * the samples times the server's median CPU per request in the run. Unlike the ledger, this sees real
 * client sockets and each server alone in its process; the profile also covers start-up and warm-up,
 * which are a small part of its samples.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CpuProfileNode, cpuProfileStages } from './stages.js';

const PROFILE_INTERVAL_US = 100;

/** The node flags that make a server write its profile into `dir/<name>`. */
export function cpuProfileFlags(dir: string, name: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${join(dir, name)}`, `--cpu-prof-interval=${PROFILE_INTERVAL_US}`];
}

export interface WrkStage {
  stage: string;
  /** µs per request, per server. */
  us: Record<string, number>;
  gateway_percent: number;
  top_functions: string[];
}

/**
 * Reads the profile each named server wrote into `dir/<name>` and returns the stages by the gateway's
 * µs, largest first. `cpuUs` holds each server's CPU per request (median of the run).
 */
export function wrkStages(dir: string, cpuUs: Record<string, number>): WrkStage[] {
  const profiles = Object.fromEntries(
    Object.keys(cpuUs).map((name) => {
      const folder = join(dir, name);
      const file = readdirSync(folder).find((f) => f.endsWith('.cpuprofile'));
      if (file === undefined) throw new Error(`no CPU profile in ${folder}`);
      const profile = JSON.parse(readFileSync(join(folder, file), 'utf8')) as { nodes: CpuProfileNode[] };
      return [name, cpuProfileStages(profile)];
    }),
  );
  const stages = [...new Set(Object.values(profiles).flatMap((p) => Object.keys(p.shares)))];
  const round1 = (v: number) => Math.round(v * 10) / 10;
  return stages
    .map((stage) => ({
      stage,
      us: Object.fromEntries(
        Object.entries(profiles).map(([name, p]) => [name, round1((p.shares[stage] ?? 0) * cpuUs[name]!)]),
      ),
      gateway_percent: round1((profiles.gateway?.shares[stage] ?? 0) * 100),
      top_functions: profiles.gateway?.top[stage] ?? [],
    }))
    .sort((a, b) => (b.us.gateway ?? 0) - (a.us.gateway ?? 0));
}

export function printWrkStages(stages: WrkStage[], detail: boolean): void {
  const names = Object.keys(stages[0]?.us ?? {});
  const width = Math.max(...stages.map((s) => s.stage.length));
  console.log('');
  console.log(`Stages under wrk (CPU profile share × median CPU per request), µs per request`);
  console.log(`${'stage'.padEnd(width)}  ${names.map((n) => n.padStart(9)).join('  ')}   share`);
  for (const s of stages) {
    console.log(
      `${s.stage.padEnd(width)}  ${names.map((n) => s.us[n]!.toFixed(1).padStart(9)).join('  ')}  ${s.gateway_percent.toFixed(1).padStart(5)} %`,
    );
    if (detail) for (const f of s.top_functions) console.log(`    ${f}`);
  }
}
