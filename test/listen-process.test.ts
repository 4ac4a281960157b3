import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { verifyWebhook } from '../src/webhooks/verify.js';
import {
  type GatewayProcess,
  gatewayProcessEnv,
  killAndWait,
  startGatewayProcess,
} from './gateway-process.js';
import { until } from './until.js';

/**
 * `msv3-gateway listen` across real processes, all on 127.0.0.1: a gateway (`serve`, SQLite, the
 * built-in sandbox), a `node:http` receiver in this process, and `listen` following the gateway's events
 * feed. An order placed before `listen` starts is not forwarded; an order and a delivery notice read
 * afterwards reach the receiver, oldest first, signed with the secret `listen` printed and with the very
 * body `GET /v1/events/{id}` returns, one printed line each; SIGTERM ends `listen` with exit code 0.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CREDENTIALS = { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'geheim' };

interface Arrival {
  headers: IncomingHttpHeaders;
  body: string;
}

describe('msv3-gateway listen as a process', () => {
  let folder: string;
  let apiKey: string;
  let gateway: GatewayProcess;
  let receiver: Server;
  let receiverUrl: string;
  const arrivals: Arrival[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-listen-'));
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    const database = await openDatabase(databaseUrl);
    await migrateToLatest(database);
    const account = await createAccount(database.db, systemClock, { name: 'Apotheke am Markt' });
    apiKey = (
      await createApiKey(database.db, systemClock, { accountId: account.id, name: 'listen', mode: 'test' })
    ).secret;
    await database.close();
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        arrivals.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    gateway = await startGatewayProcess(
      gatewayProcessEnv(databaseUrl, {
        WHOLESALER_PROBE_INTERVAL_MS: '0',
        RATE_LIMIT_TEST_POINTS: '100000',
        SHUTDOWN_TIMEOUT_MS: '1000',
      }),
      children,
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    await Promise.all(children.map(killAndWait));
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  }, 30_000);

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${gateway.url}${path}`, {
      ...init,
      headers: { 'x-api-key': apiKey, ...(init.headers as Record<string, string>) },
      signal: AbortSignal.timeout(30_000),
    });

  async function placeOrder(): Promise<void> {
    const response = await api('/v1/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...CREDENTIALS },
      body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 1 }] }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    await response.text();
  }

  async function eventIds(): Promise<string[]> {
    const response = await api('/v1/events?limit=100');
    expect(response.status).toBe(200);
    return ((await response.json()) as { events: { id: string }[] }).events.map((e) => e.id);
  }

  it('forwards the new events, signed, with the feed’s bodies, and stops on SIGTERM', {
    timeout: 180_000,
  }, async () => {
    await placeOrder();
    const before = await eventIds();
    expect(before.length).toBeGreaterThan(0);

    const listener = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli.ts',
        'listen',
        '--forward-to',
        receiverUrl,
        '--url',
        gateway.url,
        '--key',
        apiKey,
        '--interval',
        '200',
      ],
      { cwd: ROOT, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(listener);
    let stdout = '';
    let stderr = '';
    listener.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    listener.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => listener.once('exit', (code) => resolve(code)));
    await until('listen is ready', () => (stderr.includes('Stop with Ctrl-C.') ? true : undefined), 60_000);
    const secret = /Signing secret[^:]*: (whsec_\S+)/.exec(stdout)?.[1];
    expect(secret, stdout).toBeDefined();

    // An order (order.status_changed; the sandbox's notes deliver it at once: order.fulfilled), then
    // its delivery notice read (delivery.received).
    await placeOrder();
    const deliveries = await api('/v1/deliveries?wholesaler=phoenix', { headers: CREDENTIALS });
    expect(deliveries.status, await deliveries.clone().text()).toBe(200);
    await deliveries.text();
    const after = await eventIds();
    const fresh = after.filter((id) => !before.includes(id));
    expect(fresh.length).toBeGreaterThanOrEqual(2);

    await until(
      'every new event forwarded',
      () => (arrivals.length >= fresh.length ? true : undefined),
      60_000,
    );
    // Oldest first (the feed is newest first), each once, none from before the start.
    expect(arrivals.map((a) => a.headers['webhook-id'])).toEqual([...fresh].reverse());
    const types = new Set<string>();
    for (const arrival of arrivals) {
      const event = verifyWebhook(arrival.body, arrival.headers, secret!, { scheme: 'both' });
      types.add(event.type);
      const one = await api(`/v1/events/${event.id}`);
      expect(one.status).toBe(200);
      expect(arrival.body).toBe(await one.text());
      expect(arrival.headers['x-msv3-event']).toBe(event.type);
      expect(arrival.headers['x-msv3-attempt']).toBe('1');
      expect(stdout).toMatch(
        new RegExp(`Z  ${event.type.replace('.', '\\.')}  ${event.id}  -> 200 OK in \\d+ ms\\n`),
      );
    }
    expect([...types].sort()).toEqual(['delivery.received', 'order.fulfilled', 'order.status_changed']);

    listener.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 15_000)),
    ]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('msv3-gateway listen: stopped');
    // Nothing more arrived: no event from before the start, none twice.
    expect(arrivals).toHaveLength(fresh.length);
  });
});
