import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyMode } from '../src/core/key-mode.js';
import { systemClock } from '../src/lib/clock.js';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { recordEvent } from '../src/webhooks/events/record.js';
import { sampleNotice, subscribe } from '../src/webhooks/test-support/fixtures.js';
import { type GatewayProcess, killAndWait, startGatewayProcess } from './gateway-process.js';
import { until } from './until.js';

/**
 * WORKERS=2 as real processes (`node --import tsx src/cli.ts serve`: a primary and two node:cluster
 * workers on one port, a temporary SQLite file). Requests go over fresh connections (no keep-alive), so
 * the primary hands them to both workers in turn; which worker answered is read from its log line
 * (`request completed` with the response's X-Request-Id carries `worker` and `pid`).
 */

/**
 * One process start on a loaded machine (each loads the app through tsx); a gateway with workers is two
 * starts in a row: the primary, then its workers, all at once.
 */
const START_MS = 90_000;
const CLUSTER_START_MS = 2 * START_MS;
const SHUTDOWN_TIMEOUT_MS = 4_000;
const LIVE_POINTS = 6;
const SLOW_ANSWER_MS = 2_000;
const CREDENTIALS = { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'workers-secret' };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on a connection of its own. */
function send(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: {
          ...options.headers,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

type LogLine = Record<string, unknown> & { msg?: string };

function logLines(gateway: Pick<GatewayProcess, 'logs'>): LogLine[] {
  return gateway
    .logs()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

async function waitForLog(
  gateway: GatewayProcess,
  matches: (line: LogLine) => boolean,
  timeoutMs = 10_000,
): Promise<LogLine> {
  return until('the log line', () => logLines(gateway).find(matches), timeoutMs, 50);
}

/** The worker slot and pid that answered, from its `request completed` line. */
async function servedBy(gateway: GatewayProcess, answer: Answer): Promise<{ worker: number; pid: number }> {
  const id = answer.headers['x-request-id'];
  const line = await waitForLog(gateway, (l) => l.msg === 'request completed' && l.request_id === id);
  return { worker: line.worker as number, pid: line.pid as number };
}

describe('WORKERS=2: one port, two worker processes', () => {
  const children: ChildProcess[] = [];
  let folder: string;
  let databaseUrl: string;
  let accountId: string;
  let gateway: GatewayProcess;
  const keys: Record<'spread' | 'orders' | 'restart' | 'shutdown' | 'limited', string> = {
    spread: '',
    orders: '',
    restart: '',
    shutdown: '',
    limited: '',
  };

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-workers-'));
    const url = `sqlite:${join(folder, 'gateway.db')}`;
    databaseUrl = url;
    const database = await openDatabase(url);
    try {
      await migrateToLatest(database);
      const account = await createAccount(database.db, systemClock, { name: 'Workers test' });
      accountId = account.id;
      const key = async (mode: KeyMode) =>
        (await createApiKey(database.db, systemClock, { accountId: account.id, name: mode, mode })).secret;
      keys.spread = await key('test');
      keys.orders = await key('test');
      keys.restart = await key('test');
      keys.shutdown = await key('test');
      keys.limited = await key('live');
    } finally {
      await database.close();
    }
    gateway = await startGatewayProcess(
      {
        PATH: process.env.PATH,
        DATABASE_URL: url,
        PORT: '0',
        WORKERS: '2',
        LOG_LEVEL: 'info',
        CREATE_FIRST_KEY: 'false',
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        MOCK_SLOW_ANSWER_MS: String(SLOW_ANSWER_MS),
        // Windows of an hour: what is counted stays counted for the whole test.
        RATE_LIMIT_TEST_POINTS: '1000',
        RATE_LIMIT_TEST_WINDOW_SECONDS: '3600',
        RATE_LIMIT_LIVE_POINTS: String(LIVE_POINTS),
        RATE_LIMIT_LIVE_WINDOW_SECONDS: '3600',
        // One attempt at a time per worker, looking often: two at once at the receiver are both workers.
        WEBHOOK_CONCURRENCY: '1',
        WEBHOOK_POLL_INTERVAL_MS: '100',
        ALLOW_PRIVATE_ENDPOINTS: 'true',
      },
      children,
      CLUSTER_START_MS,
    );
  }, CLUSTER_START_MS + 10_000);

  afterAll(async () => {
    await Promise.all(children.splice(0).map(killAndWait));
    rmSync(folder, { recursive: true, force: true });
  });

  it('prints the listening line once, and answers from both workers, each log line naming its worker', async () => {
    expect(gateway.output().match(/listening on/g)).toHaveLength(1);
    expect(gateway.output()).toContain('(2 workers)');
    const seen = new Map<number, number>();
    for (let i = 0; i < 20 && seen.size < 2; i++) {
      const answer = await send(gateway.url, '/v1/wholesalers', { headers: { 'x-api-key': keys.spread } });
      expect(answer.status).toBe(200);
      const { worker, pid } = await servedBy(gateway, answer);
      seen.set(worker, pid);
    }
    expect([...seen.keys()].sort()).toEqual([1, 2]);
    expect(new Set(seen.values()).size).toBe(2);
    expect([...seen.values()]).not.toContain(gateway.child.pid);
    // The primary's own lines are worker 0.
    expect(logLines(gateway).find((l) => l.msg === 'worker started')).toMatchObject({
      worker: 0,
      pid: gateway.child.pid,
    });
  });

  it('shares one sandbox wholesaler: an order placed through one worker is known through the other', async () => {
    const headers = { 'x-api-key': keys.orders, ...CREDENTIALS };
    const placed = await send(gateway.url, '/v1/orders', {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'workers-order-1' },
      body: { wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 2 }] },
    });
    expect(placed.status, placed.body).toBe(200);
    const orderId = (JSON.parse(placed.body) as { order_id: string }).order_id;
    const placedBy = (await servedBy(gateway, placed)).worker;
    let other: Answer | undefined;
    for (let i = 0; i < 10 && other === undefined; i++) {
      const status = await send(gateway.url, `/v1/orders/${orderId}/status?wholesaler=phoenix`, { headers });
      expect(status.status, status.body).toBe(200);
      if ((await servedBy(gateway, status)).worker !== placedBy) other = status;
    }
    expect(other, 'no status request reached the other worker').toBeDefined();
    // 'unknown' if the other worker asked a wholesaler that never saw the order.
    expect(JSON.parse(other!.body)).toMatchObject({ order_id: orderId, status: 'available' });
  });

  it("holds one key's budget across both workers", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < LIVE_POINTS + 8; i++) {
      answers.push(await send(gateway.url, '/v1/wholesalers', { headers: { 'x-api-key': keys.limited } }));
    }
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIVE_POINTS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(8);
    const workers = new Set(await Promise.all(answers.map(async (a) => (await servedBy(gateway, a)).worker)));
    expect([...workers].sort()).toEqual([1, 2]);
  });

  it('answers GET /metrics at either worker with the counts of both', async () => {
    const answered = logLines(gateway).filter((l) => {
      const req = l.req as { method: string; route: string } | undefined;
      const res = l.res as { status: number } | undefined;
      return l.msg === 'request completed' && req?.route === '/v1/wholesalers' && res?.status === 200;
    });
    const byWorker = new Set(answered.map((l) => l.worker));
    expect([...byWorker].sort()).toEqual([1, 2]);
    const scrapedBy = new Set<number>();
    for (let i = 0; i < 10 && scrapedBy.size < 2; i++) {
      const scrape = await send(gateway.url, '/metrics');
      expect(scrape.status).toBe(200);
      scrapedBy.add((await servedBy(gateway, scrape)).worker);
      const sample = scrape.body
        .split('\n')
        .find(
          (line) =>
            line.startsWith('msv3_gateway_http_requests_total{') &&
            line.includes('route="/v1/wholesalers"') &&
            line.includes('status="200"'),
        );
      expect(Number(sample?.split(' ').at(-1))).toBe(answered.length);
    }
    expect([...scrapedBy].sort()).toEqual([1, 2]);
  });

  it('delivers each webhook event once, with both workers sending from the one SQLite outbox', async () => {
    const received: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const receiver = createHttpServer((req, res) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      received.push(String(req.headers['webhook-id']));
      req.resume();
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(204).end();
      }, 300);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const EVENTS = 12;
    try {
      const database = await openDatabase(databaseUrl);
      try {
        const scope = { accountId, mode: 'test' as const };
        const port = (receiver.address() as { port: number }).port;
        await subscribe(database.db, scope, {
          url: `http://127.0.0.1:${port}/hooks`,
          events: ['delivery.received'],
        });
        for (let i = 0; i < EVENTS; i++) {
          // Recorded by this process, as another service would: no worker is woken, both poll.
          await recordEvent(
            database.db,
            {
              accountId,
              mode: 'test',
              type: 'delivery.received',
              wholesaler: 'phoenix',
              customerId: '4711',
              data: { ...sampleNotice, tracking_number: `LA-WORKERS-${i}` },
            },
            { clock: systemClock },
          );
        }
        await until('every event received', () => new Set(received).size === EVENTS, 30_000, 100);
        // Once every delivery is recorded as delivered, no worker sends it again.
        await until(
          'every delivery recorded',
          async () =>
            (
              await database.db
                .selectFrom('webhook_deliveries')
                .select('id')
                .where('account_id', '=', accountId)
                .where('status', '!=', 'delivered')
                .execute()
            ).length === 0,
          10_000,
        );
      } finally {
        await database.close();
      }
      expect(received).toHaveLength(EVENTS);
      expect(maxInFlight).toBe(2);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 60_000);

  it(
    'restarts a worker killed with SIGKILL, in its slot, and keeps answering meanwhile',
    async () => {
      const started = (slot: number) =>
        logLines(gateway).filter(
          (l) => l.msg === 'worker started' && (l.child as { worker: number }).worker === slot,
        );
      const victim = (started(1).at(-1)!.child as { pid: number }).pid;
      process.kill(victim, 'SIGKILL');
      await waitForLog(
        gateway,
        (l) => l.msg === 'worker exited; restarting it' && (l.child as { pid: number }).pid === victim,
      );
      for (let i = 0; i < 4; i++) {
        const answer = await send(gateway.url, '/v1/wholesalers', { headers: { 'x-api-key': keys.restart } });
        expect(answer.status).toBe(200);
        expect((await servedBy(gateway, answer)).pid).not.toBe(victim);
      }
      const replacement = await waitForLog(gateway, (l) => {
        const child = l.child as { worker: number; pid: number } | undefined;
        return l.msg === 'worker started' && child?.worker === 1 && child.pid !== victim;
      });
      const newPid = (replacement.child as { pid: number }).pid;
      // Once it listens, the new worker takes its share of the connections.
      await until(
        'an answer from the new worker',
        async () => {
          const answer = await send(gateway.url, '/v1/wholesalers', {
            headers: { 'x-api-key': keys.restart },
          });
          expect(answer.status).toBe(200);
          return (await servedBy(gateway, answer)).pid === newPid;
        },
        START_MS,
        250,
      );
    },
    START_MS + 30_000,
  );

  it('on SIGTERM finishes the request in flight, stops both workers and exits 0 within SHUTDOWN_TIMEOUT_MS + 1 s', async () => {
    const workerPids = logLines(gateway)
      .filter((l) => l.msg === 'worker started')
      .map((l) => (l.child as { pid: number }).pid);
    const slow = send(gateway.url, '/v1/availability', {
      method: 'POST',
      headers: { 'x-api-key': keys.shutdown, ...CREDENTIALS },
      body: { wholesaler: 'phoenix', items: [{ pzn: SCENARIO_PZNS.SLOW_ANSWER.pzn, quantity: 1 }] },
    });
    // The request is at a worker, waiting for the sandbox's slow answer.
    await until(
      'the call at the wholesaler',
      async () =>
        /^msv3_gateway_wholesaler_calls_in_flight\{wholesaler="phoenix"[^}]*\} [1-9]/m.test(
          (await send(gateway.url, '/metrics')).body,
        ),
      SLOW_ANSWER_MS,
      20,
    );
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      gateway.child.once('exit', (code) => resolve({ code, at: Date.now() })),
    );
    const signalledAt = Date.now();
    gateway.child.kill('SIGTERM');
    const { code, at } = await exited;
    expect((await slow).status).toBe(200);
    expect(code).toBe(0);
    expect(at - signalledAt).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS + 1_000);
    for (const pid of workerPids) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  }, 30_000);
});

describe('WORKERS=2 signalled while it starts', () => {
  const children: ChildProcess[] = [];
  let folder: string;
  afterAll(async () => {
    await Promise.all(children.splice(0).map(killAndWait));
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it(
    'stops workers told to stop before they listened for it, and exits 0',
    async () => {
      folder = mkdtempSync(join(tmpdir(), 'msv3-workers-early-signal-'));
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: `sqlite:${join(folder, 'gateway.db')}`,
          PORT: '0',
          WORKERS: '2',
          LOG_LEVEL: 'info',
          // Warned about as the primary starts: the signal comes before the workers can hear the primary
          // (while the primary prepares the database it is held, held-signals.ts).
          DATABSE_URL: 'postgres://gateway@db.internal/gateway',
          // Time for workers still loading under a full suite's load to start and stop: a stop that is
          // lost still shows, as workers killed after this plus the grace (exit 1).
          SHUTDOWN_TIMEOUT_MS: '60000',
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      children.push(child);
      let logs = '';
      child.stdout.on('data', (chunk: Buffer) => {
        logs += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await until(
        'the warning',
        () => logs.includes('DATABSE_URL is not a setting') || undefined,
        START_MS,
        20,
      );
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = logLines({ logs: () => logs });
      const messages = lines.filter((l) => l.worker === 0).map((l) => l.msg);
      expect(messages).toContain('shutting down the workers');
      expect(messages).not.toContain('worker still running; killing it');
      expect(messages.at(-1)).toBe('stopped');
      for (const line of lines.filter((l) => l.msg === 'worker started'))
        expect(() => process.kill((line.child as { pid: number }).pid, 0)).toThrow(/ESRCH/);
    },
    CLUSTER_START_MS,
  );
});

describe('WORKERS=2 when the workers cannot listen', () => {
  const children: ChildProcess[] = [];
  let folder: string;
  let taken: Server;
  afterAll(async () => {
    await Promise.all(children.splice(0).map(killAndWait));
    await new Promise((resolve) => taken?.close(resolve));
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it(
    'gives up with exit code 1 after workers keep failing at start (the port is taken)',
    async () => {
      folder = mkdtempSync(join(tmpdir(), 'msv3-workers-taken-'));
      taken = createServer();
      const port = await new Promise<number>((resolve) =>
        taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)),
      );
      const start = startGatewayProcess(
        {
          PATH: process.env.PATH,
          DATABASE_URL: `sqlite:${join(folder, 'gateway.db')}`,
          PORT: String(port),
          WORKERS: '2',
          LOG_LEVEL: 'info',
        },
        children,
        4 * START_MS,
      );
      const failure = await start.then(
        () => new Error('it listened'),
        (error: Error) => error,
      );
      expect(failure.message).toContain('exited (1) before listening');
      expect(failure.message).toContain('is already in use (EADDRINUSE)');
    },
    4 * START_MS + 10_000,
  );
});
