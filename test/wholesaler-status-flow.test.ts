import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/lib/clock.js';
import { type MockWholesaler, startMockWholesaler } from '../src/mock/index.js';
import { createLogger } from '../src/observability/logger.js';
import { startServer } from '../src/server.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { openDatabase } from '../src/store/database.js';
import { startReceiver } from '../src/webhooks/test-support/receiver.js';
import { verifyWebhook } from '../src/webhooks/verify.js';
import { sandboxTenant } from '../src/wholesalers/registry.js';
import { until } from './until.js';

/** The fields of the answers this test reads. */
interface Answer {
  wholesaler: { id: string };
  signing_secret: string;
}

const CREDENTIALS = { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'sandbox-secret' };

describe('wholesaler.status_changed from the credential-free probe', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-probe-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('announces an endpoint in use going down and coming back; a 401 to the anonymous probe is up', async () => {
    const probeLog: string[] = [];
    const mockOptions = { log: (line: string) => probeLog.push(line) };
    const mocks: Record<'sandbox' | 'custom', MockWholesaler> = {
      sandbox: await startMockWholesaler(mockOptions),
      custom: await startMockWholesaler(mockOptions),
    };
    const receiver = await startReceiver();
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    const lines: string[] = [];
    const server = await startServer({
      config: loadConfig({
        PORT: '0',
        DATABASE_URL: databaseUrl,
        SANDBOX_URL: mocks.sandbox.url,
        ALLOW_PRIVATE_ENDPOINTS: 'true',
        WHOLESALER_PROBE_INTERVAL_MS: '1000',
        WEBHOOK_POLL_INTERVAL_MS: '100',
      }),
      logger: createLogger({ level: 'silent' }),
      print: (line) => lines.push(line),
    });
    const database = await openDatabase(databaseUrl);
    try {
      const testKey = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];
      const { id: accountId } = await database.db
        .selectFrom('accounts')
        .select('id')
        .executeTakeFirstOrThrow();
      const newKey = async (account: string) =>
        (await createApiKey(database.db, systemClock, { accountId: account, name: 'live', mode: 'live' }))
          .secret;
      const liveKey = await newKey(accountId);
      const sandboxPath = `/${sandboxTenant(accountId, 'phoenix')}/msv3/v2.0`;
      const strangerKey = await newKey((await createAccount(database.db, systemClock, { name: 'other' })).id);
      const call = async (key: string, path: string, body: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json', ...CREDENTIALS },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Answer };
      };
      const subscribe = (key: string, wholesaler: string) =>
        call(key, '/v1/webhooks', { url: receiver.url, wholesaler, events: ['wholesaler.status_changed'] });

      // A custom wholesaler of the live account, on the second mock; the sandbox (test key) on the first.
      const registered = await call(liveKey, '/v1/wholesalers/custom', {
        name: 'Hausapotheke Nord',
        endpoint: mocks.custom.baseUrl({ tenant: 'live/nord', version: 2 }),
      });
      const customId = registered.body.wholesaler.id;
      const secrets = {
        sandbox: (await subscribe(testKey, 'phoenix')).body.signing_secret,
        custom: (await subscribe(liveKey, customId)).body.signing_secret,
      };
      expect((await subscribe(strangerKey, customId)).status).toBe(404);

      // Real calls put both endpoints in use; the probes then find them answering 401: up, no event.
      expect((await call(testKey, '/v1/connection/test', { wholesaler: 'phoenix' })).status).toBe(200);
      expect((await call(liveKey, '/v1/connection/test', { wholesaler: customId })).status).toBe(200);
      // The mock logs `POST <path> → <status> (<ms> ms)`, with the operation name only for a SOAP call.
      const probesOf = (path: string) =>
        probeLog.filter((line) => line.startsWith(`POST ${path}/verbindungTesten → 401 `));
      const anonymousProbes = () => probesOf(sandboxPath).length + probesOf('/live/nord/msv3/v2.0').length;
      await until('four anonymous probes', () => anonymousProbes() >= 4, 5_000, 20);
      expect(probesOf(sandboxPath).length).toBeGreaterThan(1);
      expect(probesOf('/live/nord/msv3/v2.0').length).toBeGreaterThan(1);
      expect(await database.db.selectFrom('webhook_events').select('id').execute()).toEqual([]);

      const ports = { sandbox: mocks.sandbox.port, custom: mocks.custom.port };
      await Promise.all([mocks.sandbox.close(), mocks.custom.close()]);
      await receiver.waitFor(2, 5_000);
      mocks.sandbox = await startMockWholesaler({ ...mockOptions, port: ports.sandbox });
      mocks.custom = await startMockWholesaler({ ...mockOptions, port: ports.custom });
      await receiver.waitFor(4, 5_000);

      const seen = receiver.requests.map((request) => {
        const which = (['sandbox', 'custom'] as const).find((w) => {
          try {
            return verifyWebhook(request.body, request.headers, secrets[w]) !== undefined;
          } catch {
            return false;
          }
        });
        const event = JSON.parse(request.body);
        return { which, livemode: event.livemode, wholesaler: event.wholesaler, ...event.data };
      });
      expectDownThenUp(seen, customId);
    } finally {
      await database.close();
      await server.close();
      await receiver.close();
      await Promise.all([mocks.sandbox.close(), mocks.custom.close()]);
    }
  });
});

describe('wholesaler.status_changed from the circuit breaker over real calls', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-breaker-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('announces down when failing calls open the circuit and up when a call after the cool-down succeeds; no probes', async () => {
    const THRESHOLD = 3;
    const COOLDOWN_MS = 500;
    const log: string[] = [];
    const mockOptions = { log: (line: string) => log.push(line) };
    const mocks: Record<'sandbox' | 'custom', MockWholesaler> = {
      sandbox: await startMockWholesaler(mockOptions),
      custom: await startMockWholesaler(mockOptions),
    };
    const receiver = await startReceiver();
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    const lines: string[] = [];
    const server = await startServer({
      config: loadConfig({
        PORT: '0',
        DATABASE_URL: databaseUrl,
        SANDBOX_URL: mocks.sandbox.url,
        ALLOW_PRIVATE_ENDPOINTS: 'true',
        // Only real calls count: no probes.
        WHOLESALER_PROBE_INTERVAL_MS: '0',
        BREAKER_FAILURE_THRESHOLD: String(THRESHOLD),
        BREAKER_COOLDOWN_MS: String(COOLDOWN_MS),
        WEBHOOK_POLL_INTERVAL_MS: '100',
      }),
      logger: createLogger({ level: 'silent' }),
      print: (line) => lines.push(line),
    });
    const database = await openDatabase(databaseUrl);
    try {
      const testKey = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];
      const { id: accountId } = await database.db
        .selectFrom('accounts')
        .select('id')
        .executeTakeFirstOrThrow();
      const liveKey = (
        await createApiKey(database.db, systemClock, { accountId, name: 'live', mode: 'live' })
      ).secret;
      const call = async (key: string, path: string, body: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json', ...CREDENTIALS },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Answer & { error?: string } };
      };
      const subscribe = (key: string, wholesaler: string) =>
        call(key, '/v1/webhooks', { url: receiver.url, wholesaler, events: ['wholesaler.status_changed'] });
      const registered = await call(liveKey, '/v1/wholesalers/custom', {
        name: 'Hausapotheke Süd',
        endpoint: mocks.custom.baseUrl({ tenant: 'live/sued', version: 2 }),
      });
      expect(registered.status).toBe(200);
      const customId = registered.body.wholesaler.id;
      // The sandbox through the trusted transport, the custom endpoint through the address-restricted one.
      const targets = [
        { which: 'sandbox', key: testKey, wholesaler: 'phoenix' },
        { which: 'custom', key: liveKey, wholesaler: customId },
      ] as const;
      const secrets = {
        sandbox: (await subscribe(testKey, 'phoenix')).body.signing_secret,
        custom: (await subscribe(liveKey, customId)).body.signing_secret,
      };
      const connectionTest = (target: (typeof targets)[number]) =>
        call(target.key, '/v1/connection/test', { wholesaler: target.wholesaler });

      for (const target of targets) expect((await connectionTest(target)).status).toBe(200);
      const ports = { sandbox: mocks.sandbox.port, custom: mocks.custom.port };
      await Promise.all([mocks.sandbox.close(), mocks.custom.close()]);

      // THRESHOLD refused calls open each circuit; the next call is not even tried.
      for (const target of targets) {
        for (let i = 0; i < THRESHOLD; i++) {
          const failed = await connectionTest(target);
          expect([failed.status, failed.body.error]).toEqual([502, 'wholesaler_unreachable']);
        }
        const paused = await connectionTest(target);
        expect([paused.status, paused.body.error]).toEqual([503, 'wholesaler_circuit_open']);
      }
      await receiver.waitFor(2, 5_000);

      mocks.sandbox = await startMockWholesaler({ ...mockOptions, port: ports.sandbox });
      mocks.custom = await startMockWholesaler({ ...mockOptions, port: ports.custom });
      // Until the cool-down is over the circuit stays open; then the trial call succeeds and closes it.
      for (const target of targets) {
        await until(
          `${target.which}: the circuit closed`,
          async () => {
            const answer = await connectionTest(target);
            if (answer.status !== 200) expect(answer.body.error).toBe('wholesaler_circuit_open');
            return answer.status === 200;
          },
          COOLDOWN_MS + 5_000,
          50,
        );
      }
      await receiver.waitFor(4, 5_000);

      const seen = receiver.requests.map((request) => {
        const which = (['sandbox', 'custom'] as const).find((w) => {
          try {
            return verifyWebhook(request.body, request.headers, secrets[w], { scheme: 'both' }) !== undefined;
          } catch {
            return false;
          }
        });
        const event = JSON.parse(request.body);
        expect(request.headers).toMatchObject({
          'x-msv3-event': 'wholesaler.status_changed',
          'webhook-id': event.id,
          'x-msv3-request-id': event.id,
        });
        return { which, livemode: event.livemode, wholesaler: event.wholesaler, ...event.data };
      });
      expectDownThenUp(seen, customId);
      // Exactly four events, and the mocks never saw an anonymous probe: the breakers alone reported.
      expect(await database.db.selectFrom('webhook_events').select('id').execute()).toHaveLength(4);
      expect(log.filter((line) => line.includes('/verbindungTesten → 401'))).toEqual([]);
      expect(log.filter((line) => / verbindungTesten /.test(line)).length).toBeGreaterThanOrEqual(4);
    } finally {
      await database.close();
      await server.close();
      await receiver.close();
      await Promise.all([mocks.sandbox.close(), mocks.custom.close()]);
    }
  });
});

/** The sandbox's and the custom wholesaler's status events: both down (any order), then both up. */
function expectDownThenUp(seen: { which?: string }[], customId: string): void {
  const expected = (which: 'sandbox' | 'custom', status: string, reason: string) => ({
    which,
    livemode: which === 'custom',
    wholesaler: which === 'custom' ? customId : 'phoenix',
    status,
    reason,
    changed_at: expect.any(String),
  });
  const byWhich = (a: { which?: string }, b: { which?: string }) =>
    String(a.which).localeCompare(String(b.which));
  expect(seen.slice(0, 2).sort(byWhich)).toEqual([
    expected('custom', 'down', 'unreachable: ECONNREFUSED'),
    expected('sandbox', 'down', 'unreachable: ECONNREFUSED'),
  ]);
  expect(seen.slice(2).sort(byWhich)).toEqual([
    expected('custom', 'up', 'answers again'),
    expected('sandbox', 'up', 'answers again'),
  ]);
}
