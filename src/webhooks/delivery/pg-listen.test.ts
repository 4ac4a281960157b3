import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresUrl, warnSkipped } from '../../../test/db.js';
import { capturingLogger } from '../../../test/logger.js';
import { listenForNotifications } from './pg-listen.js';

describe('listenForNotifications [postgres]', () => {
  const url = postgresUrl();
  if (url === undefined) {
    warnSkipped('TEST_DATABASE_URL', 'PostgreSQL');
    it.skip('skipped: TEST_DATABASE_URL is not set, so the LISTEN connection is not tested', () => {});
    return;
  }

  const cleanUps: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp().catch(() => {});
  });

  /** A channel of this test's own: only its LISTEN connection is ever terminated. */
  const newChannel = () => `test_listen_${randomBytes(6).toString('hex')}`;

  async function admin<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  function recorder() {
    const { logger, messages } = capturingLogger();
    let notified = 0;
    return {
      get warnings() {
        return messages('warn');
      },
      notified: () => notified,
      onNotify: () => {
        notified += 1;
      },
      logger,
    };
  }

  async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  const listenerPids = async (channel: string) =>
    (
      await admin<{ pid: number }>('select pid from pg_stat_activity where query = $1', [
        `listen ${pg.escapeIdentifier(channel)}`,
      ])
    ).map((row) => row.pid);

  it('reconnects after its connection is terminated, wakes once, and hears notifications again', async () => {
    const channel = newChannel();
    const seen = recorder();
    const stop = await listenForNotifications(
      { connectionString: url },
      channel,
      seen.onNotify,
      seen.logger,
      {
        firstDelayMs: 20,
        maxDelayMs: 200,
      },
    );
    cleanUps.push(stop);
    expect(seen.notified()).toBe(1); // the wake on listening
    const [pid] = await listenerPids(channel);
    expect(pid).toBeDefined();

    await admin('select pg_terminate_backend($1)', [pid]);
    // Back with a new connection, it wakes the worker for whatever was committed meanwhile.
    await until('the reconnect', () => seen.notified() === 2);
    expect(seen.warnings).toContain('webhook notification connection lost; reconnecting');
    const [again] = await listenerPids(channel);
    expect(again).toBeDefined();
    expect(again).not.toBe(pid);

    await admin(`select pg_notify($1, 'x')`, [channel]);
    await until('the notification', () => seen.notified() === 3);
  });

  it('keeps trying with growing delays while the server refuses, then listens once it answers', async () => {
    const channel = newChannel();
    const seen = recorder();
    const target = new URL(url);
    const port = await freePort();
    const proxyUrl = new URL(url);
    proxyUrl.port = String(port);
    // Nothing listens on `port` yet: every attempt is refused.
    const stop = await listenForNotifications(
      { connectionString: proxyUrl.toString() },
      channel,
      seen.onNotify,
      seen.logger,
      { firstDelayMs: 20, maxDelayMs: 160 },
    );
    cleanUps.push(stop);
    expect(seen.notified()).toBe(0);
    expect(seen.warnings).toEqual(['webhook notifications unavailable; polling until they return']);

    await sleep(1_200);
    const retries = seen.warnings.filter(
      (w) => w === 'webhook notification connection failed; retrying',
    ).length;
    // Without backoff (20 ms apart) there would be dozens; with it (20, 40, 80, 160, 160, … ms, each
    // between half and all of that) at most about ten.
    expect(retries).toBeGreaterThanOrEqual(3);
    expect(retries).toBeLessThanOrEqual(14);

    // The server "returns" on that port (a TCP relay to the real one).
    const relay = await startRelay(port, target.hostname, Number(target.port || 5432));
    cleanUps.push(() => relay.close());
    await until('listening through the relay', () => seen.notified() === 1);
    await admin(`select pg_notify($1, 'x')`, [channel]);
    await until('the notification', () => seen.notified() === 2);
  });

  it('stops trying once stopped', async () => {
    const seen = recorder();
    const port = await freePort();
    const proxyUrl = new URL(url);
    proxyUrl.port = String(port);
    const stop = await listenForNotifications(
      { connectionString: proxyUrl.toString() },
      newChannel(),
      seen.onNotify,
      seen.logger,
      { firstDelayMs: 10, maxDelayMs: 20 },
    );
    await stop();
    const count = seen.warnings.length;
    await sleep(200);
    expect(seen.warnings).toHaveLength(count);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Forwards every connection on 127.0.0.1:`port` to `host`:`targetPort`. */
async function startRelay(
  port: number,
  host: string,
  targetPort: number,
): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(targetPort, host);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
