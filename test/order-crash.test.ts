import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockWholesaler, SCENARIO_PZNS, startMockWholesaler } from '../src/mock/index.js';
import {
  gatewayProcessEnv,
  startGatewayProcess,
  testKeyOn,
  writePhoenixCatalogue,
} from './gateway-process.js';
import { until } from './until.js';

/**
 * The gateway dies (SIGKILL) after sending `bestellen` and before storing the answer; restarted on the
 * same database, a retry with the same Idempotency-Key finds the order stored as `sending`, asks the
 * wholesaler for it by its Bestellung Id, and answers from that: the wholesaler holds exactly one order.
 * The wholesaler is a standalone mock in this process (the in-process sandbox would die with the gateway);
 * it takes the order at once and holds the answer back (LATE_ANSWER).
 */

const TENANT = 'crash/phoenix';
const LOCK_MS = 1_500;

describe('an order interrupted by a gateway crash', () => {
  let folder: string;
  let wholesaler: MockWholesaler;
  let apiKey: string;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-crash-'));
    wholesaler = await startMockWholesaler({ lateAnswerMs: 60_000 });
    const catalogueFile = writePhoenixCatalogue(folder, wholesaler.baseUrl({ tenant: TENANT, version: 2 }));
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    apiKey = await testKeyOn(databaseUrl);
    env = gatewayProcessEnv(databaseUrl, {
      WHOLESALER_CATALOGUE: catalogueFile,
      IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_MS),
    });
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await wholesaler?.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  const ONE_SUB_ORDER = {
    items: [
      { pzn: SCENARIO_PZNS.LATE_ANSWER.pzn, quantity: 2 },
      { pzn: '4114918', quantity: 3 },
    ],
  };
  const THREE_SUB_ORDERS = {
    sub_orders: [
      ONE_SUB_ORDER,
      { order_type: 'batch', order_label: 'LAGER', items: [{ pzn: '4114918', quantity: 10 }] },
      { order_type: 'special', items: [{ pzn: '1234562', quantity: 1 }] },
    ],
  };

  function order(url: string, key: string, username: string, body: object): Promise<Response> {
    return fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': apiKey,
        'x-msv3-username': username,
        'x-msv3-password': 'sandbox-secret',
        'idempotency-key': key,
      },
      body: JSON.stringify({ wholesaler: 'phoenix_test', ...body }),
    });
  }

  it.each([
    ['one sub-order', 'apotheke1', ONE_SUB_ORDER],
    ['three sub-orders of three types', 'apotheke3', THREE_SUB_ORDERS],
  ])(
    'reconciles after a restart (%s): one order at the wholesaler, and the client gets its result',
    {
      timeout: 90_000,
    },
    async (_name, username, body) => {
      const key = randomUUID();
      const placed = () => wholesaler.placedOrderCount({ tenant: TENANT, customerId: username });
      const sent = {
        bestellen: wholesaler.requestCount('bestellen'),
        status: wholesaler.requestCount('bestellstatusAbfragen'),
      };
      const before = await startGatewayProcess(env, children);
      const lost = order(before.url, key, username, body).catch((error: unknown) => error);
      await until(
        'bestellen at the wholesaler',
        () => wholesaler.requestCount('bestellen') > sent.bestellen,
        60_000,
        10,
      );
      // bestellen has reached the wholesaler, which took the order and holds the answer: kill the gateway now.
      before.child.kill('SIGKILL');
      expect(await lost).toBeInstanceOf(Error);
      expect(placed()).toBe(1);

      const after = await startGatewayProcess(env, children);
      // The dead process's lock on the key lapses after IDEMPOTENCY_LOCK_TIMEOUT_MS; until then: 409.
      const response = await until(
        'the lock lapsed',
        async () => {
          const answer = await order(after.url, key, username, body);
          if (answer.status !== 409) return answer;
          expect(answer.headers.get('retry-after')).toBe('1');
          return undefined;
        },
        20_000,
        250,
      );
      expect(response.status).toBe(200);
      const result = (await response.json()) as {
        request_id: string;
        sub_orders: { sub_order_id: string }[];
      };
      expect(result).toMatchObject({
        status: 'confirmed',
        placement_status: 'confirmed',
        items: expect.arrayContaining(
          [
            { pzn: SCENARIO_PZNS.LATE_ANSWER.pzn, quantity_ordered: 2, quantity_confirmed: 2 },
            { pzn: '04114918', quantity_ordered: 3, quantity_confirmed: 3 },
          ].map((item) => expect.objectContaining(item)),
        ),
      });
      const stored = wholesaler.orders(TENANT, username);
      expect(stored.map((o) => o.id)).toEqual([result.request_id]);
      // Every sub-order answered, matched by the ids the first process sent.
      expect(result.sub_orders.map((s) => s.sub_order_id)).toEqual(stored[0]!.subOrders!.map((s) => s.id));
      expect(placed()).toBe(1);
      expect(wholesaler.requestCount('bestellen')).toBe(sent.bestellen + 1);
      expect(wholesaler.requestCount('bestellstatusAbfragen')).toBe(sent.status + 1);

      const replay = await order(after.url, key, username, body);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toEqual(result);
      after.child.kill('SIGTERM');
    },
  );
});
