import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerDependencyGauges } from './dependency-metrics.js';

describe('dependency gauges', () => {
  it('say at each scrape whether the database and Redis are reachable', async () => {
    let databaseUp = true;
    let redisUp = true;
    const registry = new Registry();
    registerDependencyGauges(registry, {
      database: async () => {
        if (!databaseUp) throw new Error('connect ECONNREFUSED');
        return true;
      },
      redis: () => redisUp,
    });
    expect(await registry.metrics()).toMatch(/msv3_gateway_database_up 1\n[\s\S]*msv3_gateway_redis_up 1\n/);
    databaseUp = false;
    redisUp = false;
    expect(await registry.metrics()).toMatch(/msv3_gateway_database_up 0\n[\s\S]*msv3_gateway_redis_up 0\n/);
  });

  it('has no Redis series where rate limits do not use Redis', async () => {
    const registry = new Registry();
    registerDependencyGauges(registry, { database: async () => true });
    expect(await registry.metrics()).not.toContain('redis');
  });
});
