import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.js';
import { type MockWholesaler, SCENARIO_PZNS, startMockWholesaler } from '../src/mock/index.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { type Database, openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { createScratchPostgresDatabase, postgresUrl, warnSkipped } from './db.js';
import {
  type GatewayProcess,
  gatewayProcessEnv,
  killAndWait,
  startGatewayProcess,
  writePhoenixCatalogue,
} from './gateway-process.js';

/**
 * docs/idempotency.md "Orders" across real processes: two `msv3-gateway serve` OS processes share one PostgreSQL
 * database (created fresh for this test) and one wholesaler (a standalone mock in this process, which
 * holds each order's answer back for SLOW_MS so the requests overlap). The same order with the same
 * Idempotency-Key, sent to both processes at once and again afterwards, reaches the wholesaler as exactly
 * one `bestellen` and is stored once; every other answer is 409 or the replay of the identical body.
 */

const TENANT = 'processes/phoenix';
const SLOW_MS = 3_000;
const CREDENTIALS = { username: 'apotheke1', password: 'two-processes-secret' };

describe('one Idempotency-Key across two gateway processes on PostgreSQL', () => {
  if (postgresUrl() === undefined) {
    warnSkipped('TEST_DATABASE_URL', 'PostgreSQL');
    it.skip('skipped: TEST_DATABASE_URL is not set, so two gateway processes on PostgreSQL are not tested', () => {});
    return;
  }

  let folder: string | undefined;
  let scratch: { url: string; dispose(): Promise<void> } | undefined;
  let database: Database | undefined;
  let wholesaler: MockWholesaler | undefined;
  let apiKey: string;
  const children: ChildProcess[] = [];
  let gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-processes-'));
    wholesaler = await startMockWholesaler({ slowAnswerMs: SLOW_MS });
    const catalogueFile = writePhoenixCatalogue(folder, wholesaler.baseUrl({ tenant: TENANT, version: 2 }));
    scratch = await createScratchPostgresDatabase();
    // Migrated and keyed before the processes start, so neither start-up races the other's migrations.
    database = await openDatabase(scratch.url, { maxConnections: 2 });
    await migrateToLatest(database);
    const account = await createAccount(database.db, systemClock, { name: 'Apotheke am Markt' });
    apiKey = (
      await createApiKey(database.db, systemClock, { accountId: account.id, name: 'two', mode: 'test' })
    ).secret;
    const env: NodeJS.ProcessEnv = gatewayProcessEnv(scratch.url, {
      WHOLESALER_CATALOGUE: catalogueFile,
    });
    gateways = await Promise.all([startGatewayProcess(env, children), startGatewayProcess(env, children)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(children.map(killAndWait));
    await database?.close().catch(() => {});
    await scratch?.dispose().catch(() => {});
    await wholesaler?.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  }, 30_000);

  async function order(gateway: GatewayProcess, key: string) {
    const response = await fetch(`${gateway.url}/v1/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': apiKey,
        'x-msv3-username': CREDENTIALS.username,
        'x-msv3-password': CREDENTIALS.password,
        'idempotency-key': key,
      },
      body: JSON.stringify({
        wholesaler: 'phoenix_test',
        items: [
          { pzn: SCENARIO_PZNS.SLOW_ANSWER.pzn, quantity: 1 },
          { pzn: '4114918', quantity: 2 },
        ],
      }),
      signal: AbortSignal.timeout(20_000),
    });
    return {
      gateway: gateways.indexOf(gateway),
      status: response.status,
      replayed: response.headers.get('idempotent-replayed'),
      retryAfter: response.headers.get('retry-after'),
      body: await response.text(),
    };
  }

  it('places exactly one order; the duplicates get 409 or the replay of the identical body', {
    timeout: 60_000,
  }, async () => {
    const key = randomUUID();
    const [first, second] = gateways as [GatewayProcess, GatewayProcess];
    const responses = await Promise.all(
      [first, second, first, second, first, second].map((g) => order(g, key)),
    );

    const executed = responses.filter((r) => r.status === 200 && r.replayed === null);
    expect(executed, JSON.stringify(responses)).toHaveLength(1);
    const original = executed[0]!;
    expect(JSON.parse(original.body)).toMatchObject({
      status: 'confirmed',
      order_id: expect.stringMatching(/^GW-/),
    });
    // Both processes answered; each duplicate is a 409 or a replay of exactly the original's body.
    expect(new Set(responses.map((r) => r.gateway))).toEqual(new Set([0, 1]));
    for (const response of responses) {
      if (response === original) continue;
      if (response.status === 409) {
        expect(JSON.parse(response.body).error).toBe('idempotency_request_in_progress');
        expect(response.retryAfter).toBe('1');
      } else {
        expect(response.status, response.body).toBe(200);
        expect(response.replayed).toBe('true');
        expect(response.body).toBe(original.body);
      }
    }
    // The slow answer kept the first request in flight: the process that did not run it saw the key taken.
    expect(responses.filter((r) => r.status === 409).length).toBeGreaterThan(0);

    // Afterwards, both processes replay the stored answer without calling the wholesaler.
    for (const gateway of [second, first, second, first]) {
      const later = await order(gateway, key);
      expect(later.status, later.body).toBe(200);
      expect(later.replayed).toBe('true');
      expect(later.body).toBe(original.body);
    }

    expect(wholesaler!.requestCount('bestellen')).toBe(1);
    expect(wholesaler!.requestCount('bestellstatusAbfragen')).toBe(0);
    expect(wholesaler!.placedOrderCount({ tenant: TENANT })).toBe(1);
    const { request_id: requestId, order_id: orderId } = JSON.parse(original.body);
    expect(wholesaler!.orders(TENANT, CREDENTIALS.username).map((o) => o.id)).toEqual([requestId]);

    const db = database!.db;
    const orders = await sql<{ id: string; bestellung_id: string; state: string }>`
      select id, bestellung_id, state from orders`.execute(db);
    expect(orders.rows).toEqual([{ id: orderId, bestellung_id: requestId, state: expect.any(String) }]);
    const keys = await sql<{ n: string }>`select count(*) as n from idempotency_keys`.execute(db);
    expect(Number(keys.rows[0]!.n)).toBe(1);
  });
});
