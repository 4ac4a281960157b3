/**
 * The second part of `npm run bench:sandbox`: sandbox orders as an integrator places them. The gateway
 * runs as `npm start` runs it (SQLite in a temporary folder, the built-in sandbox), a `pk_test_` key made
 * with `keys create`, and `POST /v1/orders` of two articles, one at a time, each with its own
 * Idempotency-Key: a first block to warm up (its figures would be the JIT's), then ORDERS more in blocks.
 * Per block: the gateway process's CPU time per order (/proc) and the wall time per order; `orders`
 * counts the tenant's orders including the warm-up. Everything stays on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { createKey } from '../common/gateway.js';
import {
  CLI,
  processCpuUs,
  startScriptNodeFlags,
  stopAndWait,
  track,
  untilListening,
} from '../common/processes.js';

export interface GatewayBlock {
  orders: number;
  cpu_us_per_order: number;
  wall_ms_per_order: number;
}

const BODY = JSON.stringify({
  wholesaler: 'phoenix',
  items: [
    { pzn: '04114918', quantity: 3 },
    { pzn: '09990122', quantity: 2 },
  ],
});

export async function ordersThroughGateway(orders: number, block: number): Promise<GatewayBlock[]> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-sandbox-gateway-'));
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: `sqlite:${join(folder, 'gateway.db')}`,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_TEST_POINTS: '1000000',
  };
  try {
    const key = createKey(env, 'bench', 'test');
    const child = track(
      spawn(process.execPath, [...startScriptNodeFlags(), CLI, 'serve'], {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    try {
      const url = await untilListening(child, 'gateway', 30_000);
      const placeOrder = async (n: number) => {
        const response = await request(`${url}/v1/orders`, {
          method: 'POST',
          body: BODY,
          headers: {
            'content-type': 'application/json',
            'x-api-key': key,
            'x-msv3-username': 'apoBench',
            'x-msv3-password': 'geheim',
            'idempotency-key': `bench-${n}`,
          },
        });
        const text = await response.body.text();
        if (response.statusCode !== 200) {
          throw new Error(`order ${n}: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
        }
      };
      for (let i = 0; i < block; i++) await placeOrder(i); // warm-up
      const blocks: GatewayBlock[] = [];
      for (let placed = block; placed < orders + block; placed += block) {
        const cpu = processCpuUs(child.pid!)!;
        const started = performance.now();
        for (let i = 0; i < block; i++) await placeOrder(placed + i);
        blocks.push({
          orders: placed + block,
          cpu_us_per_order: Math.round(((processCpuUs(child.pid!)! - cpu) / block) * 10) / 10,
          wall_ms_per_order: Math.round(((performance.now() - started) / block) * 1000) / 1000,
        });
      }
      return blocks;
    } finally {
      await stopAndWait(child);
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
