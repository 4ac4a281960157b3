import { parseArgs } from 'node:util';
import { connectionBurstCheck } from './connection-burst.js';
import type { BatteryContext } from './context.js';
import { databaseLossCheck } from './database-loss.js';
import { fuzzCheck } from './fuzz.js';
import type { Gateway } from './gateway.js';
import { hostileUpstreamCheck } from './hostile-check.js';
import { killOrderCheck } from './kill-order.js';
import { overloadCheck } from './overload.js';
import { findPostgresBin, type OwnPostgres, startOwnPostgres } from './postgres.js';
import { findRedisServer, type OwnRedis, startOwnRedis } from './redis.js';
import { redisLossCheck } from './redis-loss.js';
import { broken, duration, formatTable, type Row } from './report.js';
import { secretsCheck } from './secrets.js';
import { sharedOriginCheck } from './shared-origin.js';
import { sigtermCheck } from './sigterm.js';

/**
 * `npm run battery` (full, at most 10 minutes) and `npm run battery -- --short` / BATTERY=short (at most
 * 3 minutes, in .ci/run): real gateway processes against hostile clients, hostile wholesalers and
 * failing dependencies, on loopback, with their own PostgreSQL and Redis. Prints a table of figures and
 * exits 1 if any check failed (2 if it could not start). docs/battery.md describes every check.
 */

const CHECKS: { name: string; run: (ctx: BatteryContext) => Promise<Row[]> }[] = [
  { name: 'fuzz', run: fuzzCheck },
  { name: 'hostile-upstream', run: hostileUpstreamCheck },
  { name: 'overload', run: overloadCheck },
  { name: 'shared-origin', run: sharedOriginCheck },
  { name: 'connection-burst', run: connectionBurstCheck },
  { name: 'database-loss', run: databaseLossCheck },
  { name: 'redis-loss', run: redisLossCheck },
  { name: 'kill-order', run: killOrderCheck },
  { name: 'secrets', run: secretsCheck },
  { name: 'sigterm', run: sigtermCheck },
];

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { short: { type: 'boolean' }, seed: { type: 'string' }, only: { type: 'string' } },
  });
  const short = values.short === true || process.env.BATTERY === 'short';
  const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
  const only = values.only?.split(',');
  const log = (line: string) => process.stderr.write(`[battery] ${line}\n`);

  const postgresBin = findPostgresBin();
  const redisServer = findRedisServer();
  if (postgresBin === undefined || redisServer === undefined) {
    const missing = [
      postgresBin === undefined
        ? 'PostgreSQL server binaries (/usr/lib/postgresql/<version>/bin/initdb, pg_ctl; Debian package postgresql)'
        : '',
      redisServer === undefined ? 'redis-server (Debian package redis-server)' : '',
    ].filter(Boolean);
    process.stdout.write(
      `battery: cannot run, missing ${missing.join(' and ')}. Install them (apt-get install postgresql redis-server); .ci/run does.\n`,
    );
    return 2;
  }

  const started = performance.now();
  log(`${short ? 'short' : 'full'} form, seed ${seed}; PostgreSQL from ${postgresBin}, ${redisServer}`);
  const gateways: Gateway[] = [];
  let postgres: OwnPostgres | undefined;
  let redis: OwnRedis | undefined;
  const rows: { check: string; rows: Row[]; ms: number; startMs: number; starts: number }[] = [];
  const stop = async () => {
    await Promise.all(gateways.map((g) => g.kill().catch(() => {})));
    await redis?.remove().catch(() => {});
    await postgres?.remove().catch(() => {});
  };
  // Ctrl-C or a CI timeout: still remove the own PostgreSQL and Redis.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void stop().then(() => process.exit(130)));
  try {
    postgres = await startOwnPostgres(postgresBin);
    redis = await startOwnRedis(redisServer);
    log(`own PostgreSQL on 127.0.0.1:${postgres.port}, own Redis on 127.0.0.1:${redis.port}`);
    const ctx: BatteryContext = { short, postgres, redis, gateways, log, seed };
    for (const check of CHECKS) {
      if (only !== undefined && !only.includes(check.name)) continue;
      const checkStarted = performance.now();
      log(`${check.name} …`);
      let result: Row[];
      try {
        result = await check.run(ctx);
      } catch (error) {
        result = [broken(check.name, error)];
      }
      // A check that failed half-way may leave gateways behind; the next one starts its own.
      const started = gateways.splice(0);
      await Promise.all(started.map((g) => g.kill().catch(() => {})));
      const ms = performance.now() - checkStarted;
      const startMs = started.reduce((sum, g) => sum + g.startMs, 0);
      log(
        `${check.name} done in ${duration(ms)} (${started.length} gateway start-ups: ${duration(startMs)})`,
      );
      rows.push({ check: check.name, rows: result, ms, startMs, starts: started.length });
    }
  } finally {
    await stop();
  }

  const all = rows.flatMap((r) => r.rows);
  const failed = all.filter((r) => !r.pass);
  process.stdout.write(
    `\nmsv3-gateway battery (${short ? 'short' : 'full'} form, seed ${seed}, node ${process.version})\n\n`,
  );
  process.stdout.write(`${formatTable(all)}\n\n`);
  const startMs = rows.reduce((sum, r) => sum + r.startMs, 0);
  const starts = rows.reduce((sum, r) => sum + r.starts, 0);
  process.stdout.write(
    `time per check: ${rows.map((r) => `${r.check} ${duration(r.ms)}`).join(', ')}; total ${duration(performance.now() - started)}, of which ${starts} gateway start-ups took ${duration(startMs)}\n`,
  );
  for (const r of failed)
    if (r.why !== undefined) process.stdout.write(`FAIL ${r.check}: ${r.why.slice(0, 600)}\n`);
  process.stdout.write(
    `battery: ${all.length - failed.length} of ${all.length} checks held${failed.length > 0 ? `; ${failed.length} failed` : ''}\n`,
  );
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `battery: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(2);
  },
);
