import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { type Database, openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { recordEvent } from '../src/webhooks/events/record.js';
import { sampleNotice } from '../src/webhooks/test-support/fixtures.js';
import { verifyWebhook } from '../src/webhooks/verify.js';
import { createScratchPostgresDatabase, postgresUrl, warnSkipped } from './db.js';
import {
  type GatewayProcess,
  gatewayProcessEnv,
  killAndWait,
  startGatewayProcess,
} from './gateway-process.js';
import { until } from './until.js';

/**
 * Webhook delivery across real processes: two `msv3-gateway serve` OS processes share one PostgreSQL
 * database (created fresh) and deliver to a `node:http` receiver in this process, all on 127.0.0.1.
 *  (a) Events recorded by both gateways (sandbox orders → `order.status_changed`) and by a third writer
 *      (this process, `recordEvent` on the same database, as another service would) reach the receiver
 *      once each, while both workers send at the same time.
 *  (b) The receiver holds an attempt open; the process sending it is SIGKILLed; after its lease ends the
 *      surviving process delivers the same event again (same `webhook-id`, `X-MSV3-Request-Id`, body),
 *      correctly signed.
 */

const LEASE_MS = 3_000;
const TIMEOUT_MS = 2_000;
/** Attempts in flight per process; the receiver seeing more at once proves both processes send together. */
const CONCURRENCY = 4;
const CREDENTIALS = { 'x-msv3-username': 'apothekeprocs', 'x-msv3-password': 'sandbox-secret' };

interface Arrival {
  headers: IncomingHttpHeaders;
  body: string;
  /** The sender's port: which process sent it (see `socketOwner`). */
  remotePort: number;
  receivedAt: number;
}

/** What the receiver does with a request: answer after `delayMs`, or hold it open. */
type Responder = (arrival: Arrival) => { delayMs: number } | 'hold';

interface TestReceiver {
  url: string;
  port: number;
  arrivals: Arrival[];
  /** Most requests open at once so far. */
  maxInFlight(): number;
  respond(responder: Responder): void;
  resetMaxInFlight(): void;
  close(): Promise<void>;
}

async function startTestReceiver(): Promise<TestReceiver> {
  const arrivals: Arrival[] = [];
  const held: ServerResponse[] = [];
  let responder: Responder = () => ({ delayMs: 0 });
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const arrival: Arrival = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remotePort: req.socket.remotePort ?? 0,
        receivedAt: Date.now(),
      };
      arrivals.push(arrival);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let open = true;
      const done = () => {
        if (open) inFlight -= 1;
        open = false;
      };
      res.on('finish', done);
      res.on('close', done);
      const answer = responder(arrival);
      if (answer === 'hold') {
        held.push(res);
        return;
      }
      setTimeout(() => res.writeHead(200).end('ok'), answer.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    arrivals,
    maxInFlight: () => maxInFlight,
    respond(next) {
      responder = next;
    },
    resetMaxInFlight() {
      maxInFlight = inFlight;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The process (of `pids`) holding the TCP connection from 127.0.0.1:`localPort` to `remotePort`, found
 * through /proc (Linux): the socket's inode in /proc/net/tcp{,6}, then the process with a descriptor on
 * it. Undefined where /proc is not available.
 */
function socketOwner(localPort: number, remotePort: number, pids: number[]): number | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      if (fields[1]!.endsWith(`:${hex(localPort)}`) && fields[2]!.endsWith(`:${hex(remotePort)}`)) {
        inodes.add(fields[9]!);
      }
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match && inodes.has(match[1]!)) return pid;
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  }
  return undefined;
}

describe('webhook delivery by two gateway processes on one PostgreSQL database', () => {
  if (postgresUrl() === undefined) {
    warnSkipped('TEST_DATABASE_URL', 'PostgreSQL');
    it.skip('skipped: TEST_DATABASE_URL is not set, so two gateway processes delivering webhooks are not tested', () => {});
    return;
  }

  let scratch: { url: string; dispose(): Promise<void> } | undefined;
  let database: Database | undefined;
  let receiver: TestReceiver | undefined;
  let apiKey: string;
  let accountId: string;
  let secret: string;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];
  let gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    scratch = await createScratchPostgresDatabase();
    // Migrated and keyed before the processes start, so neither start-up races the other's migrations.
    database = await openDatabase(scratch.url, { maxConnections: 2 });
    await migrateToLatest(database);
    accountId = (await createAccount(database.db, systemClock, { name: 'Apotheke am Markt' })).id;
    apiKey = (await createApiKey(database.db, systemClock, { accountId, name: 'procs', mode: 'test' }))
      .secret;
    receiver = await startTestReceiver();
    env = gatewayProcessEnv(scratch.url, {
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      WEBHOOK_LEASE_MS: String(LEASE_MS),
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_POLL_INTERVAL_MS: '100',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '64',
      WHOLESALER_PROBE_INTERVAL_MS: '0',
      RATE_LIMIT_TEST_POINTS: '100000',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
    gateways = await Promise.all([startGatewayProcess(env, children), startGatewayProcess(env, children)]);
    const created = await fetch(`${gateways[0]!.url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: receiver.url,
        wholesaler: 'phoenix',
        events: ['delivery.received', 'order.status_changed'],
      }),
    });
    expect(created.status).toBe(201);
    secret = ((await created.json()) as { signing_secret: string }).signing_secret;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(children.map(killAndWait));
    await receiver?.close();
    await database?.close().catch(() => {});
    await scratch?.dispose().catch(() => {});
  }, 30_000);

  async function placeOrder(gateway: GatewayProcess): Promise<string> {
    const response = await fetch(`${gateway.url}/v1/orders`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...CREDENTIALS },
      body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 1 }] }),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return (JSON.parse(text) as { order_id: string }).order_id;
  }

  /** The process's `msv3_gateway_webhook_attempts_total`, all outcomes and triggers. */
  async function attemptsOf(gateway: GatewayProcess): Promise<number> {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    return text
      .split('\n')
      .filter((line) => line.startsWith('msv3_gateway_webhook_attempts_total'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  }

  const deliveryRows = () =>
    database!.db.selectFrom('webhook_deliveries').select(['event_id', 'status', 'attempts']).execute();

  it('delivers every event exactly once while both processes send at the same time', {
    timeout: 90_000,
  }, async () => {
    const ORDERS_PER_PROCESS = 20;
    const RECORDED = 300;
    const r = receiver!;
    // Each answer takes a little while, so attempts stay in flight while the other process claims.
    r.respond((arrival) => ({ delayMs: 20 + (arrival.body.length % 3) * 10 }));
    r.resetMaxInFlight();
    const started = Date.now();

    // Both gateways place orders (each an order.status_changed committed with the order, then a
    // delivery.received for its notice) while a third writer commits delivery.received events; every
    // commit NOTIFYs both workers.
    const orders = Promise.all(
      gateways.map(async (gateway) => {
        for (let i = 0; i < ORDERS_PER_PROCESS; i++) await placeOrder(gateway);
      }),
    );
    orders.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
    for (let i = 0; i < RECORDED; i++) {
      await recordEvent(
        database!.db,
        {
          accountId,
          mode: 'test',
          type: 'delivery.received',
          wholesaler: 'phoenix',
          customerId: '4711',
          data: { ...sampleNotice, tracking_number: `LA-PROC-${i}` },
        },
        { clock: systemClock },
      );
    }
    await orders;
    // Each order also raises delivery.received for its sandbox notice (one: one article, one tour),
    // recorded just after the order is answered.
    const expected = RECORDED + 4 * ORDERS_PER_PROCESS;
    const events = await until(
      'every event recorded',
      async () => {
        // Each order is also fulfilled by its notice (order.fulfilled), which nobody subscribed to.
        const rows = await database!.db
          .selectFrom('webhook_events')
          .select(['id', 'type'])
          .where('type', '!=', 'order.fulfilled')
          .execute();
        return rows.length >= expected ? rows : undefined;
      },
      10_000,
    );
    expect(events).toHaveLength(expected);

    await until(
      'all deliveries delivered',
      async () => ((await deliveryRows()).every((d) => d.status === 'delivered') ? true : undefined),
      30_000,
    );
    const duration = Date.now() - started;

    // Exactly once per event: no webhook-id twice, none missing, every one signed correctly.
    const hits = new Map<string, number>();
    for (const arrival of r.arrivals) {
      const id = String(arrival.headers['webhook-id']);
      hits.set(id, (hits.get(id) ?? 0) + 1);
      expect(verifyWebhook(arrival.body, arrival.headers, secret, { scheme: 'both' }).id).toBe(id);
    }
    expect(r.arrivals).toHaveLength(expected);
    expect([...hits.values()].filter((n) => n !== 1)).toEqual([]);
    expect([...hits.keys()].sort()).toEqual(events.map((e) => e.id).sort());
    expect(events.filter((e) => e.type === 'order.status_changed')).toHaveLength(2 * ORDERS_PER_PROCESS);
    const rows = await deliveryRows();
    expect(rows.filter((d) => d.attempts !== 1)).toEqual([]);
    expect(await database!.db.selectFrom('webhook_attempts').select('id').execute()).toHaveLength(expected);

    // Both processes took part, at the same time: more requests were open at once than one process may
    // send, and each process counted attempts of its own, together exactly one per event.
    expect(r.maxInFlight()).toBeGreaterThan(CONCURRENCY);
    const perProcess = await until(
      'metrics count every attempt',
      async () => {
        const counts = await Promise.all(gateways.map(attemptsOf));
        return counts.reduce((a, b) => a + b, 0) === expected ? counts : undefined;
      },
      5_000,
    );
    for (const count of perProcess) expect(count).toBeGreaterThan(0);
    console.info(
      `[webhooks-processes] ${expected} events delivered once each in ${duration} ms; attempts per process ${perProcess.join(' / ')}; at most ${r.maxInFlight()} requests open at once`,
    );
  });

  it('after a SIGKILL during an attempt, the surviving process delivers the same event again once the lease ends', {
    timeout: 60_000,
  }, async () => {
    const r = receiver!;
    const before = r.arrivals.length;
    // Hold every first attempt open; answer later ones at once.
    r.respond((arrival) => (arrival.headers['x-msv3-attempt'] === '1' ? 'hold' : { delayMs: 0 }));
    const pids = gateways.map((g) => g.child.pid!);
    const orderId = await placeOrder(gateways[0]!);
    // The order's own event (its notice's delivery.received is held as well, and left alone).
    const isStatusChange = (a: (typeof r.arrivals)[number]) =>
      a.headers['x-msv3-event'] === 'order.status_changed';
    const first = await until(
      'the first attempt',
      () => r.arrivals.slice(before).find(isStatusChange),
      10_000,
    );
    const lease = await database!.db
      .selectFrom('webhook_deliveries')
      .select(['locked_until', 'attempts'])
      .where('event_id', '=', String(first.headers['webhook-id']))
      .executeTakeFirstOrThrow();
    expect(lease.attempts).toBe(1);

    // Kill the process that is sending it (the one holding the connection); without /proc, kill both
    // and start a new process instead.
    const owner = socketOwner(first.remotePort, r.port, pids);
    const killedAt = Date.now();
    let survivor: GatewayProcess;
    if (owner !== undefined) {
      const victim = gateways.find((g) => g.child.pid === owner)!;
      await killAndWait(victim.child);
      survivor = gateways.find((g) => g !== victim)!;
    } else {
      await Promise.all(gateways.map((g) => killAndWait(g.child)));
      survivor = await startGatewayProcess(env, children);
    }
    expect(first.headers['x-msv3-attempt']).toBe('1');

    const again = await until(
      'the redelivery',
      () =>
        r.arrivals
          .slice(before)
          .find((a) => a.headers['webhook-id'] === first.headers['webhook-id'] && a !== first),
      LEASE_MS + 15_000,
    );
    if (owner !== undefined)
      expect(socketOwner(again.remotePort, r.port, [survivor.child.pid!])).toBe(survivor.child.pid);
    expect(again.headers).toMatchObject({
      'webhook-id': first.headers['webhook-id'],
      'x-msv3-request-id': first.headers['x-msv3-request-id'],
      'x-msv3-event-id': first.headers['x-msv3-event-id'],
      'x-msv3-delivery-id': first.headers['x-msv3-delivery-id'],
      'x-msv3-event': 'order.status_changed',
      'x-msv3-attempt': '2',
    });
    expect(again.body).toBe(first.body);
    const event = verifyWebhook(again.body, again.headers, secret, { scheme: 'both' });
    expect(event).toMatchObject({
      id: first.headers['webhook-id'],
      type: 'order.status_changed',
      data: { order_id: orderId, status: 'available' },
    });
    expect(first.headers['x-msv3-request-id']).toBe(event.id);
    // Not before the dead process's lease ran out (all processes share this machine's clock).
    expect(Number(lease.locked_until)).toBeGreaterThan(first.receivedAt);
    expect(again.receivedAt).toBeGreaterThanOrEqual(Number(lease.locked_until));

    await until(
      'the delivery recorded as delivered',
      async () => {
        const row = (await deliveryRows()).find((d) => d.event_id === event.id);
        return row?.status === 'delivered' ? row : undefined;
      },
      5_000,
    );
    expect((await deliveryRows()).find((d) => d.event_id === event.id)).toMatchObject({
      status: 'delivered',
      attempts: 2,
    });
    // The event arrived twice, the cut attempt and its redelivery; nothing else carried its id.
    expect(
      r.arrivals.slice(before).filter((a) => a.headers['webhook-id'] === first.headers['webhook-id']),
    ).toHaveLength(2);
    console.info(
      `[webhooks-processes] killed ${owner === undefined ? 'both processes' : `pid ${owner}`} ${killedAt - first.receivedAt} ms after the first attempt arrived; redelivered ${again.receivedAt - first.receivedAt} ms after it (lease ${LEASE_MS} ms)`,
    );
  });
});
