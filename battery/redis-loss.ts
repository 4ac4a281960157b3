import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { baseEnv, lastErrorLine, provisionKeys, startGateway } from './gateway.js';
import { call } from './http.js';
import { duration, type Row, row } from './report.js';

/**
 * RATE_LIMIT_STORE=redis at the battery's own redis-server, which is killed (SIGKILL) under traffic and
 * started again. Documented (docs/api-keys.md, "Rate limits"): each instance falls back to its own in-memory budget
 * until the store is back. Figures per phase: answers, 5xx, slowest answer; afterwards Redis holds the
 * budgets again; the process never exits.
 */

interface Phase {
  name: string;
  statuses: Map<string, number>;
  maxMs: number;
}

export async function redisLossCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-redis-'));
  try {
    const databaseUrl = await ctx.postgres.createDatabase('redisloss');
    const keys = await provisionKeys(databaseUrl);
    const gateway = await startGateway(
      {
        ...baseEnv(databaseUrl),
        WHOLESALER_CATALOGUE: writeLoopbackCatalogue(folder, [{ id: 'phoenix', version: 2 }]),
        RATE_LIMIT_STORE: 'redis',
        REDIS_URL: ctx.redis.url,
        RATE_LIMIT_TEST_POINTS: '10',
      },
      ctx.gateways,
    );
    const phaseMs = ctx.short ? 3_000 : 8_000;
    let phase: Phase = { name: 'before', statuses: new Map(), maxMs: 0 };
    const phases: Phase[] = [phase];
    let running = true;
    const clients = Array.from({ length: 8 }, async () => {
      while (running) {
        const outcome = await call(`${gateway.url}/v1/wholesalers`, {
          headers: { 'x-api-key': keys.test },
          timeoutMs: 10_000,
        });
        const current = phase;
        const label = outcome.ok ? String(outcome.status) : outcome.failure;
        current.statuses.set(label, (current.statuses.get(label) ?? 0) + 1);
        current.maxMs = Math.max(current.maxMs, outcome.ms);
        await sleep(5);
      }
    });
    await sleep(phaseMs);
    const keysBefore = await ctx.redis.keyCount();
    phase = { name: 'Redis down', statuses: new Map(), maxMs: 0 };
    phases.push(phase);
    await ctx.redis.kill();
    await sleep(phaseMs);
    phase = { name: 'Redis back', statuses: new Map(), maxMs: 0 };
    phases.push(phase);
    await ctx.redis.start();
    await sleep(phaseMs);
    const keysAfter = await ctx.redis.keyCount();
    running = false;
    await Promise.all(clients);
    const alive = gateway.exit() === undefined;
    await gateway.kill();

    const describe = (p: Phase) =>
      `${p.name}: ${[...p.statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}, slowest ${duration(p.maxMs)}`;
    const bad = (p: Phase) =>
      [...p.statuses].filter(([s]) => !['200', '429'].includes(s)).reduce((n, [, c]) => n + c, 0);
    const [before, down, back] = phases as [Phase, Phase, Phase];
    const limitedWhileDown = (down.statuses.get('429') ?? 0) > 0;
    return [
      row(
        'redis loss: traffic continues',
        `${describe(before)}; ${describe(down)}; ${describe(back)}`,
        bad(down) === 0 && bad(back) === 0 && down.maxMs < 2_000,
        'requests failed or hung while Redis was down or coming back',
      ),
      row(
        'redis loss: documented fallback',
        `while down: ${limitedWhileDown ? 'budgets still enforced (429s), from memory' : 'no 429 at all'}; Redis keys ${keysBefore ?? '?'} before, ${keysAfter ?? '?'} after restart`,
        limitedWhileDown && (keysAfter ?? 0) > 0,
        'the in-memory fallback or the return to Redis did not happen',
      ),
      row(
        'redis loss: gateway process alive',
        alive ? 'running after kill and restart of Redis' : `exited ${gateway.exit()}`,
        alive,
        lastErrorLine(gateway.output()),
      ),
    ];
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
