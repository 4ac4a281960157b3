import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { until } from '../test/until.js';
import { loadConfig } from './config.js';
import { IDEMPOTENCY_TTL_MS } from './http/idempotency-rules.js';
import { manualClock } from './lib/clock.js';
import { createLogger } from './observability/logger.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { exitOnSignals, startServer } from './server.js';
import { createAccount } from './store/accounts.js';
import { openDatabase } from './store/database.js';
import { claimIdempotencyKey } from './store/idempotency.js';
import { shutdownTiming } from './wiring.js';

/**
 * Holds every request in the rate limit until `release()`, so a request can be caught in flight;
 * `held` is how many are waiting.
 */
function gatedLimiter(): RateLimiter & { closed: boolean; held: number; release(): void } {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    closed: false,
    held: 0,
    release: () => open(),
    async consume() {
      this.held++;
      await gate;
      return { allowed: true, limit: 10, remaining: 9, resetSeconds: 1 };
    },
    async peek() {
      return { allowed: true, limit: 10, remaining: 10, resetSeconds: 0 };
    },
    async close() {
      this.closed = true;
    },
  };
}

function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('startServer', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-server-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const logger = createLogger({ level: 'silent' });
  const configFor = (name: string, env: NodeJS.ProcessEnv = {}) =>
    loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(folder, name, 'gateway.db')}`, ...env });

  it('migrates, listens, prints the URL and, on the first start only, a test key', async () => {
    const config = configFor('first-start');
    const lines: string[] = [];
    const server = await startServer({ config, logger, print: (line) => lines.push(line) });
    const key = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)?.[0];
    expect(lines[0]).toBe(`msv3-gateway 0.1.0 listening on ${server.url}`);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines.join('\n')).toContain(`${server.url}/docs`);
    expect(key).toBeDefined();
    const response = await fetch(`${server.url}/v1/wholesalers`, { headers: { 'x-api-key': key! } });
    expect(response.status).toBe(200);
    expect(await server.close()).toEqual({ clean: true });

    const again: string[] = [];
    const restarted = await startServer({ config, logger, print: (line) => again.push(line) });
    expect(again.join('\n')).not.toMatch(/pk_test_/);
    expect(again).toContain(
      'API keys: 1 usable (1 test, 0 live); keys list shows them. Make another: msv3-gateway keys create --name NAME --mode test|live',
    );
    const stillValid = await fetch(`${restarted.url}/v1/wholesalers`, { headers: { 'x-api-key': key! } });
    expect(stillValid.status).toBe(200);
    await restarted.close();
  });

  it('finishes an in-flight request while answering new connections 503, then closes its dependencies', async () => {
    const rateLimiter = gatedLimiter();
    const lines: string[] = [];
    const server = await startServer({
      config: configFor('drain'),
      logger,
      rateLimiter,
      print: (l) => lines.push(l),
    });
    const key = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];

    const inFlight = fetch(`${server.url}/v1/wholesalers`, { headers: { 'x-api-key': key } });
    await until('the request in flight', () => rateLimiter.held === 1, 5_000);
    const closing = server.close();
    // Still accepting: a new connection is answered, not refused, and readiness fails at once.
    for (const path of ['/v1/health/ready', '/v1/wholesalers']) {
      const drained = await fetch(`${server.url}${path}`, { headers: { 'x-api-key': key } });
      expect(drained.status).toBe(503);
      expect(drained.headers.get('retry-after')).toBe('1');
      expect(drained.headers.get('connection')).toBe('close');
      expect(await drained.json()).toMatchObject({ error: 'service_unavailable' });
    }
    rateLimiter.release();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { wholesalers: unknown[] }).wholesalers.length).toBeGreaterThan(0);
    expect(await closing).toEqual({ clean: true });
    expect(await connectionRefused(server.url)).toBe(true);
    expect(rateLimiter.closed).toBe(true);
    // SQLite checkpoints and removes the write-ahead log only when the last connection closes.
    const files = readdirSync(join(folder, 'drain'));
    expect(files).toContain('gateway.db');
    expect(existsSync(join(folder, 'drain', 'gateway.db-wal'))).toBe(false);
  });

  it('cuts connections still busy after SHUTDOWN_TIMEOUT_MS and reports an unclean stop', async () => {
    const lines: string[] = [];
    const config = configFor('timeout', { SHUTDOWN_TIMEOUT_MS: '300' });
    const rateLimiter = gatedLimiter(); // never released
    const server = await startServer({ config, logger, rateLimiter, print: (l) => lines.push(l) });
    const key = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];
    const inFlight = fetch(`${server.url}/v1/wholesalers`, { headers: { 'x-api-key': key } }).then(
      (r) => r.status,
      () => 'cut',
    );
    await until('the request in flight', () => rateLimiter.held === 1, 5_000);
    const started = Date.now();
    expect(await server.close()).toEqual({ clean: false });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await inFlight).toBe('cut');
  });

  it('runs the periodic jobs once listening: expired idempotency keys are purged', async () => {
    const clock = manualClock();
    const config = configFor('jobs', { IDEMPOTENCY_PURGE_INTERVAL_MS: '1000' });
    const server = await startServer({ config, logger, clock });
    // A second connection to the same SQLite file, as another gateway process would have.
    const database = await openDatabase(config.database.url);
    try {
      const account = await createAccount(database.db, clock, { name: 'Apotheke am Markt' });
      const claim = (keyHash: string, ttlMs: number) =>
        claimIdempotencyKey(database.db, clock, {
          scope: { apiKeyId: 'key_1', accountId: account.id, keyHash },
          fingerprint: 'f',
          requestId: `req_${keyHash}`,
          lockMs: 1_000,
          ttlMs,
        });
      await claim('short', 60_000);
      await claim('day', IDEMPOTENCY_TTL_MS);
      const left = async () =>
        (await database.db.selectFrom('idempotency_keys').select('key_hash').execute()).map(
          (k) => k.key_hash,
        );
      // A purge runs (the short-lived key goes) and leaves the key that has not expired.
      clock.advance(60_000);
      await until('a purge', async () => (await left()).length === 1, 5_000);
      expect(await left()).toEqual(['day']);
      clock.advance(IDEMPOTENCY_TTL_MS);
      await until('the second purge', async () => (await left()).length === 0, 5_000);
    } finally {
      await database.close();
      await server.close();
    }
  });

  it('fails to start, and leaves nothing open, when the port is taken', async () => {
    const first = await startServer({ config: configFor('port-a'), logger });
    const port = new URL(first.url).port;
    await expect(startServer({ config: configFor('port-b', { PORT: port }), logger })).rejects.toThrow(
      /EADDRINUSE/,
    );
    await first.close();
  });
});

describe('shutdown timing and exit', () => {
  const logger = createLogger({ level: 'silent' });
  afterEach(() => vi.useRealTimers());

  it('stops wholesaler calls 500 ms before the shutdown limit, a quarter of a short limit before it', () => {
    expect(shutdownTiming(10_000)).toEqual({ timeoutMs: 10_000, stopCallsAfterMs: 9_500 });
    expect(shutdownTiming(1_000)).toEqual({ timeoutMs: 1_000, stopCallsAfterMs: 750 });
    expect(shutdownTiming(0)).toEqual({ timeoutMs: 0, stopCallsAfterMs: 0 });
  });

  /** `exitOnSignals` on an emitter standing in for the process; `codes` collects the exit codes. */
  function signalled(close: () => Promise<{ clean: boolean }>) {
    const signals = new EventEmitter();
    const codes: number[] = [];
    exitOnSignals({ close, shutdownTimeoutMs: 100 }, logger, (code) => codes.push(code), signals);
    return { signals, codes };
  }

  it('exits with 0 after a clean close and with 1 after an unclean one', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const clean = signalled(async () => ({ clean: true }));
    clean.signals.emit('SIGTERM', 'SIGTERM');
    const unclean = signalled(async () => ({ clean: false }));
    unclean.signals.emit('SIGINT', 'SIGINT');
    await vi.advanceTimersByTimeAsync(10);
    expect(clean.codes).toEqual([0]);
    expect(unclean.codes).toEqual([1]);
    // The last-resort timer was cleared: no second exit.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(clean.codes).toEqual([0]);
  });

  it('exits with 1 shortly after the limit when closing hangs, and at once on a second signal', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const hanging = signalled(() => new Promise(() => {}));
    hanging.signals.emit('SIGTERM', 'SIGTERM');
    await vi.advanceTimersByTimeAsync(300);
    expect(hanging.codes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_200);
    expect(hanging.codes).toEqual([1]);

    const impatient = signalled(() => new Promise(() => {}));
    impatient.signals.emit('SIGTERM', 'SIGTERM');
    impatient.signals.emit('SIGTERM', 'SIGTERM');
    expect(impatient.codes).toEqual([1]);
  });
});
