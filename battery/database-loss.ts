import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startMockWholesaler } from '../src/mock/index.js';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { baseEnv, type Gateway, lastErrorLine, provisionKeys, startGateway } from './gateway.js';
import { call } from './http.js';
import { type OrderRecord, placeOrderWithRetries } from './order-client.js';
import { duration, type Row, row } from './report.js';
import { startWebhookReceiver } from './webhook-receiver.js';

/**
 * Two gateway processes on the battery's own PostgreSQL, one sandbox wholesaler (SANDBOX_URL, a mock in
 * this process, so its orders can be counted) and a webhook receiver. Under order traffic the database's
 * connections are terminated and the server is stopped with `-m immediate` and started again. Then:
 * no process exit, every acknowledged order exactly once at the wholesaler, none twice, every order's
 * webhook event received, no order row left `sending`, database failures answered 503 with
 * Retry-After rather than 500, and every order that needed a retry acknowledged within
 * ACKNOWLEDGED_WITHIN_MS of the database's return (the Idempotency-Key's lock is the default, a minute:
 * an outcome left unrecorded by a hiccup must not wait for it).
 */

const DATABASE = 'dbloss';
/** The longest an order that needed a retry may wait after the database's return for its acknowledgement. */
const ACKNOWLEDGED_WITHIN_MS = 10_000;
/** Each order: three sub-orders of three types, one Bestellung (docs/orders.md). */
const THREE_SUB_ORDERS = {
  sub_orders: [
    { items: [{ pzn: '04114918', quantity: 1 }] },
    { order_type: 'batch', order_label: 'LAGER', items: [{ pzn: '04114918', quantity: 2 }] },
    { order_type: 'special', items: [{ pzn: '01234562', quantity: 1 }] },
  ],
};

interface Disruption {
  atMs: number;
  what: 'terminate' | 'restart';
  downMs?: number;
}

export async function databaseLossCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-dbloss-'));
  const sandbox = await startMockWholesaler();
  const receiver = await startWebhookReceiver();
  const pg = ctx.postgres;
  try {
    const databaseUrl = await pg.createDatabase(DATABASE);
    const keys = await provisionKeys(databaseUrl);
    const env = {
      ...baseEnv(databaseUrl),
      WHOLESALER_CATALOGUE: writeLoopbackCatalogue(folder, [{ id: 'phoenix', version: 2 }]),
      SANDBOX_URL: sandbox.url,
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      RATE_LIMIT_TEST_POINTS: '100000',
      WEBHOOK_POLL_INTERVAL_MS: '500',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_LEASE_MS: '4000',
    };
    const gateways: Gateway[] = await Promise.all([
      startGateway(env, ctx.gateways),
      startGateway(env, ctx.gateways),
    ]);
    const hook = await call(`${gateways[0]!.url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': keys.test },
      body: JSON.stringify({ url: receiver.url, wholesaler: 'phoenix', events: ['order.status_changed'] }),
    });
    if (!hook.ok || hook.status !== 201)
      throw new Error(`webhook subscription failed: ${hook.ok ? hook.body : hook.failure}`);

    const plan: Disruption[] = ctx.short
      ? [
          { atMs: 2_000, what: 'terminate' },
          { atMs: 5_000, what: 'restart', downMs: 3_000 },
          { atMs: 11_000, what: 'terminate' },
        ]
      : [
          { atMs: 3_000, what: 'terminate' },
          { atMs: 7_000, what: 'terminate' },
          { atMs: 11_000, what: 'restart', downMs: 4_000 },
          { atMs: 20_000, what: 'terminate' },
          { atMs: 24_000, what: 'restart', downMs: 2_000 },
          { atMs: 30_000, what: 'terminate' },
        ];
    const trafficMs = ctx.short ? 14_000 : 34_000;
    const started = performance.now();
    const urls = () => gateways.map((g) => g.url);
    const orders: Promise<OrderRecord>[] = [];
    const clients = Array.from({ length: 6 }, async () => {
      while (performance.now() - started < trafficMs && gateways.some((g) => g.exit() === undefined)) {
        const order = placeOrderWithRetries({
          gateways: urls,
          apiKey: keys.test,
          wholesaler: 'phoenix',
          order: THREE_SUB_ORDERS,
          deadline: started + trafficMs + 60_000,
          abandon: () => gateways.every((g) => g.exit() !== undefined),
        });
        orders.push(order);
        await order;
      }
    });
    const disruptions: string[] = [];
    /** When the database answered again after each disruption (performance.now()). */
    const backAt: number[] = [];
    const disrupt = (async () => {
      for (const step of plan) {
        await sleep(Math.max(0, started + step.atMs - performance.now()));
        if (step.what === 'terminate') {
          disruptions.push(
            `${duration(performance.now() - started)}: ${await pg.terminateBackends(DATABASE)} connections terminated`,
          );
          backAt.push(performance.now());
        } else {
          await pg.stopImmediately();
          disruptions.push(
            `${duration(performance.now() - started)}: stopped -m immediate for ${duration(step.downMs ?? 0)}`,
          );
          await sleep(step.downMs ?? 0);
          await pg.start();
          backAt.push(performance.now());
        }
      }
    })();
    await Promise.all([...clients, disrupt]);
    const records = await Promise.all(orders);
    ctx.log(`database loss: ${records.length} orders, disruptions: ${disruptions.join('; ')}`);

    // Webhook events may still be on their way (retries after a failed attempt come after 5 s).
    const acknowledged = records.filter((r) => r.acknowledged);
    const eventOrderIds = () => new Set([...receiver.events.values()].map((e) => String(e.data.order_id)));
    const waitUntil = performance.now() + 40_000;
    const someAlive = () => gateways.some((g) => g.exit() === undefined);
    while (
      performance.now() < waitUntil &&
      someAlive() &&
      acknowledged.some((r) => !eventOrderIds().has(r.orderId ?? ''))
    )
      await sleep(500);

    const rows = await judge(
      ctx,
      gateways,
      records,
      sandbox,
      eventOrderIds(),
      receiver.events.size,
      plan.length,
    );
    return [...rows, acknowledgedAfterReturn(records, backAt, started)];
  } finally {
    await receiver.close();
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function judge(
  ctx: BatteryContext,
  gateways: Gateway[],
  records: OrderRecord[],
  sandbox: { placedOrderCount(filter: { customerId: string }): number; requestCount(op?: string): number },
  eventOrderIds: Set<string>,
  eventCount: number,
  disruptionCount: number,
): Promise<Row[]> {
  const exits = gateways.filter((g) => g.exit() !== undefined);
  const acknowledged = records.filter((r) => r.acknowledged);
  const lost = acknowledged.filter((r) => sandbox.placedOrderCount({ customerId: r.username }) === 0);
  const doubled = records.filter((r) => sandbox.placedOrderCount({ customerId: r.username }) > 1);
  const unsettled = records.filter((r) => !r.settled);
  const refused = records.filter((r) => r.settled && !r.acknowledged);
  const attempts = records.flatMap((r) => r.attempts);
  const count = (test: (a: (typeof attempts)[number]) => boolean) => attempts.filter(test).length;
  const internal = count((a) => a.status === 500);
  const unavailable = count((a) => a.status === 503 && a.kind === 'service_unavailable');
  const unavailableWithoutRetry = count((a) => a.status === 503 && a.retryAfter === undefined);
  const noAnswer = count((a) => typeof a.status === 'string');
  const missingEvents = acknowledged.filter((r) => !eventOrderIds.has(r.orderId ?? ''));
  let sending = -1;
  let unknown = -1;
  try {
    const rows = await ctx.postgres.query<{ state: string; n: string }>(
      DATABASE,
      'select state, count(*) as n from orders group by state',
    );
    sending = Number(rows.find((r) => r.state === 'sending')?.n ?? 0);
    unknown = Number(rows.find((r) => r.state === 'unknown')?.n ?? 0);
  } catch {
    // sending stays -1: reported as not measured
  }
  const statusSummary = [
    ...new Map(attempts.map((a) => [`${a.status}${a.kind ? ` ${a.kind}` : ''}`, 0])).keys(),
  ]
    .map(
      (label) =>
        `${attempts.filter((a) => `${a.status}${a.kind ? ` ${a.kind}` : ''}` === label).length} × ${label}`,
    )
    .join(', ');
  process.stderr.write(`  database loss answers: ${statusSummary}\n`);
  return [
    row(
      'db loss: gateway processes alive',
      `2 processes, ${disruptionCount} disruptions: ${exits.length} exited${exits.length > 0 ? ` (${exits.map((g) => g.exit()).join(', ')})` : ''}`,
      exits.length === 0,
      `a lost PostgreSQL connection ended the process: ${lastErrorLine(exits[0]?.output() ?? '')}`,
    ),
    row(
      'db loss: orders lost or doubled',
      `${records.length} orders, ${acknowledged.length} acknowledged, ${refused.length} refused; at the wholesaler: ${lost.length} acknowledged but missing, ${doubled.length} placed twice; ${unsettled.length} still unanswered after 60 s of retries; bestellen sent ${sandbox.requestCount('bestellen')} times`,
      lost.length === 0 && doubled.length === 0 && unsettled.length === 0,
      `${unsettled.length} orders never got a final answer; last answers: ${unsettled
        .slice(0, 3)
        .map((r) => JSON.stringify(r.attempts.at(-1)))
        .join(' ')}`,
    ),
    row(
      'db loss: 503 + Retry-After, never 500',
      `${attempts.length} attempts: ${internal} × 500, ${unavailable} × 503 service_unavailable (${unavailableWithoutRetry} without Retry-After), ${noAnswer} without an answer`,
      internal === 0 && unavailableWithoutRetry === 0 && exits.length === 0,
      internal > 0 || unavailableWithoutRetry > 0
        ? 'a database failure was answered 500 internal_error or 503 without Retry-After'
        : 'inconclusive: the gateway processes exited, so most attempts got no answer at all',
    ),
    row(
      'db loss: rows left sending',
      sending < 0
        ? 'not measured (database unreachable)'
        : `${sending} sending, ${unknown} unknown after the clients' retries`,
      sending === 0,
      'an order that reached the wholesaler stayed `sending` in the database',
    ),
    row(
      'db loss: webhook events lost',
      `${eventCount} events received; ${missingEvents.length} of ${acknowledged.length} acknowledged orders without their order.status_changed`,
      missingEvents.length === 0,
      'an acknowledged order never produced its webhook event',
    ),
  ];
}

/**
 * The time from the database's return to the acknowledgement of each order that needed a retry: an
 * outcome the database could not record at once must be recorded when it is back, not when the key's
 * lock lapses (docs/resilience.md "The Idempotency-Key when the database fails").
 */
function acknowledgedAfterReturn(
  records: readonly OrderRecord[],
  backAt: readonly number[],
  started: number,
): Row {
  const retried = records.filter((r) => r.acknowledged && r.attempts.length > 1);
  const waits = retried
    .map((r) => {
      const acknowledgedAt = r.attempts.at(-1)!.at;
      const back = Math.max(...backAt.filter((at) => at <= acknowledgedAt));
      return { wait: acknowledgedAt - back, at: acknowledgedAt - started, attempts: r.attempts.length };
    })
    .filter((w) => Number.isFinite(w.wait))
    .sort((a, b) => a.wait - b.wait);
  const last = waits.at(-1);
  const median = waits[Math.floor(waits.length / 2)];
  return row(
    "db loss: acknowledged after the database's return",
    last === undefined
      ? `no order needed a retry (${backAt.length} returns of the database)`
      : `${waits.length} orders needed a retry; the last acknowledged ${duration(last.wait)} after the database's return (at ${duration(last.at)}, attempt ${last.attempts}), median ${duration(median!.wait)}; bound ${duration(ACKNOWLEDGED_WITHIN_MS)}`,
    last === undefined || last.wait <= ACKNOWLEDGED_WITHIN_MS,
    "an order that needed a retry was acknowledged long after the database was back: its outcome waited for the Idempotency-Key's lock to lapse",
  );
}
