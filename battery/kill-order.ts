import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SCENARIO_PZNS, startMockWholesaler } from '../src/mock/index.js';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { baseEnv, provisionKeys, startGateway } from './gateway.js';
import { placeOrderWithRetries } from './order-client.js';
import { duration, type Row, row } from './report.js';

/**
 * kill -9 of the gateway after `bestellen` reached the wholesaler (which takes the order and holds its
 * answer back, LATE_ANSWER), a new gateway process on the same PostgreSQL database, and the client's
 * retry with the same Idempotency-Key: exactly one `bestellen` and one order at the wholesaler.
 */

const TENANT = 'battery/phoenix';

export async function killOrderCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-kill-'));
  const wholesaler = await startMockWholesaler({ lateAnswerMs: 120_000 });
  try {
    const databaseUrl = await ctx.postgres.createDatabase('killorder');
    const keys = await provisionKeys(databaseUrl);
    const env = {
      ...baseEnv(databaseUrl),
      WHOLESALER_CATALOGUE: writeLoopbackCatalogue(folder, [
        { id: 'phoenix', version: 2, test: wholesaler.baseUrl({ tenant: TENANT, version: 2 }) },
      ]),
      IDEMPOTENCY_LOCK_TIMEOUT_MS: '1500',
    };
    const first = await startGateway(env, ctx.gateways);
    const key = randomUUID();
    const username = 'apothekekill';
    const order = (gateways: () => string[], deadline: number) =>
      placeOrderWithRetries({
        gateways,
        apiKey: keys.test,
        wholesaler: 'phoenix_test',
        // Three sub-orders of three types in one Bestellung; the first holds the answer back.
        order: {
          sub_orders: [
            {
              items: [
                { pzn: SCENARIO_PZNS.LATE_ANSWER.pzn, quantity: 2 },
                { pzn: '4114918', quantity: 3 },
              ],
            },
            { order_type: 'batch', order_label: 'LAGER', items: [{ pzn: '4114918', quantity: 10 }] },
            { order_type: 'special', items: [{ pzn: '1234562', quantity: 1 }] },
          ],
        },
        deadline,
        key,
        username,
        timeoutMs: 60_000,
      });
    const interrupted = order(() => [first.url], performance.now() + 1);
    const waitFrom = performance.now();
    while (wholesaler.requestCount('bestellen') === 0 && performance.now() - waitFrom < 30_000)
      await sleep(20);
    const bestellenBeforeKill = wholesaler.requestCount('bestellen');
    first.child.kill('SIGKILL');
    const lost = await interrupted;
    const second = await startGateway(env, ctx.gateways);
    const retryStarted = performance.now();
    const retried = await order(() => [second.url], performance.now() + 60_000);
    const retryMs = performance.now() - retryStarted;
    const bestellen = wholesaler.requestCount('bestellen');
    const placed = wholesaler.placedOrderCount({ tenant: TENANT });
    const last = retried.attempts.at(-1);
    await second.kill();
    return [
      row(
        'kill -9 mid-order: one bestellen',
        `first attempt ended ${String(lost.attempts[0]?.status)}; after restart the retry got ${String(last?.status)}${last?.kind ? ` ${last.kind}` : ''} after ${retried.attempts.length} attempts in ${duration(retryMs)}; at the wholesaler: ${bestellen} bestellen, ${placed} orders`,
        bestellenBeforeKill === 1 && bestellen === 1 && placed === 1 && retried.acknowledged,
        bestellen > 1 || placed > 1
          ? 'the order reached the wholesaler more than once'
          : bestellenBeforeKill === 0
            ? `the first attempt never reached the wholesaler before the kill: ${JSON.stringify(lost.attempts)}`
            : `the retry was not acknowledged: ${JSON.stringify(retried.attempts.slice(-3))}`,
      ),
    ];
  } finally {
    await wholesaler.close();
    rmSync(folder, { recursive: true, force: true });
  }
}
