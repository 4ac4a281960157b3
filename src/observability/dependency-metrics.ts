import { Gauge, type Registry } from 'prom-client';

/**
 * Whether the gateway reaches what it depends on, read at scrape time (docs/observability.md): the
 * database always, Redis where rate limits are shared through it. With WORKERS > 1 the cluster's value
 * is the lowest of the workers' (`aggregator: 'min'`), so one worker that cannot reach it shows.
 */
export function registerDependencyGauges(
  registry: Registry,
  checks: { database: () => Promise<boolean>; redis?: () => boolean },
): void {
  new Gauge({
    name: 'msv3_gateway_database_up',
    help: 'Whether the database answered `select 1` within 1 s at this scrape (1) or not (0).',
    registers: [registry],
    aggregator: 'min',
    async collect() {
      this.set((await checks.database().catch(() => false)) ? 1 : 0);
    },
  });
  const redis = checks.redis;
  if (redis === undefined) return;
  new Gauge({
    name: 'msv3_gateway_redis_up',
    help: 'Whether the Redis connection of the shared rate limits is up (1) or not (0: each process counts alone).',
    registers: [registry],
    aggregator: 'min',
    collect() {
      this.set(redis() ? 1 : 0);
    },
  });
}
