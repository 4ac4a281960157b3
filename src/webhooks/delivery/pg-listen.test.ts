import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { postgresUrl, warnSkipped } from '../../../test/db.js';
import { capturingLogger } from '../../../test/logger.js';
import { until } from '../../../test/until.js';
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
    const { logger, lines, messages } = capturingLogger();
    let notified = 0;
    return {
      get warnings() {
        return messages('warn');
      },
      /** When each warning `message` was logged (pino's epoch milliseconds). */
      loggedAt: (message: string) => lines.filter((l) => l.msg === message).map((l) => l.time as number),
      notified: () => notified,
      onNotify: () => {
        notified += 1;
      },
      logger,
    };
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
    await until('the reconnect', () => seen.notified() === 2, 10_000, 10);
    expect(seen.warnings).toContain('webhook notification connection lost; reconnecting');
    const [again] = await listenerPids(channel);
    expect(again).toBeDefined();
    expect(again).not.toBe(pid);

    await admin(`select pg_notify($1, 'x')`, [channel]);
    await until('the notification', () => seen.notified() === 3, 10_000, 10);
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

    // It keeps trying, with growing delays: 40, 80, 160, 160, … ms, each between half and all of that,
    // so five retries come at least 20 + 40 + 80 + 80 + 80 = 300 ms after the first failure; without
    // backoff (20 ms apart) they would come within about 100 ms. A loaded machine only makes them later;
    // the bound leaves 50 ms for timers that fire by a loop time a little behind the clock.
    const retries = await until(
      'five retries',
      () => {
        const at = seen.loggedAt('webhook notification connection failed; retrying');
        return at.length >= 5 && at;
      },
      10_000,
      10,
    );
    const [failedAt] = seen.loggedAt('webhook notifications unavailable; polling until they return');
    expect(retries[4]! - failedAt!).toBeGreaterThanOrEqual(250);

    // The server "returns" on that port (a TCP relay to the real one).
    const relay = await startRelay(port, target.hostname, Number(target.port || 5432));
    cleanUps.push(() => relay.close());
    await until('listening through the relay', () => seen.notified() === 1, 10_000, 10);
    await admin(`select pg_notify($1, 'x')`, [channel]);
    await until('the notification', () => seen.notified() === 2, 10_000, 10);
  });

  it('stops trying once stopped', async () => {
    const seen = recorder();
    const port = await freePort();
    const proxyUrl = new URL(url);
    proxyUrl.port = String(port);
    // The retry timer is vitest's: a retry scheduled and then cleared can be seen, not waited for.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const stop = await listenForNotifications(
        { connectionString: proxyUrl.toString() },
        newChannel(),
        seen.onNotify,
        seen.logger,
        { firstDelayMs: 10, maxDelayMs: 20 },
      );
      expect(vi.getTimerCount()).toBe(1); // the first retry
      await stop();
      const count = seen.warnings.length;
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(200);
      expect(seen.warnings).toHaveLength(count);
    } finally {
      vi.useRealTimers();
    }
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
