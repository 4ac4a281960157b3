import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockWholesaler, SCENARIO_PZNS, startMockWholesaler } from '../src/mock/index.js';
import {
  type GatewayProcess,
  gatewayProcessEnv,
  killAndWait,
  startGatewayProcess,
  testKeyOn,
} from './gateway-process.js';
import { type InterceptingWholesaler, startInterceptingWholesaler } from './intercepting-wholesaler.js';
import { until } from './until.js';

/**
 * A split over three wholesalers through real processes (docs/split-orders.md "Crashes and retries"):
 * the gateway is killed (SIGKILL) the moment the second wholesaler has taken its order and before its
 * answer reaches the gateway; the third was never sent. Restarted on the same database, a retry with the
 * same Idempotency-Key reads the stored plan, answers the first order from what is stored, asks the
 * second wholesaler for its order (bestellstatusAbfragen) and places the third: each wholesaler holds
 * exactly one order, and the answer names all three. The wholesalers are one standalone mock in this
 * process, playing phoenix, alliance and sanacorp by tenant path, behind a proxy that acts on the
 * second `bestellen`.
 */

const WHOLESALERS = ['phoenix', 'alliance', 'sanacorp'] as const;
const LOCK_MS = 1_500;
const USER = 'apothekesplit';

describe('a split order interrupted by a gateway crash', () => {
  let folder: string;
  let mock: MockWholesaler;
  let proxy: InterceptingWholesaler;
  let apiKey: string;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];
  const tenant = (wholesaler: string) => `split-crash/${wholesaler}`;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-split-crash-'));
    mock = await startMockWholesaler();
    proxy = await startInterceptingWholesaler();
    proxy.target = mock.url;
    const catalogueFile = join(folder, 'wholesalers.json');
    writeFileSync(
      catalogueFile,
      JSON.stringify({
        wholesalers: WHOLESALERS.map((id) => ({
          id,
          name: id,
          version: 2,
          test: { baseUrl: `${proxy.url}/${tenant(id)}/msv3/v2.0` },
        })),
      }),
    );
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    apiKey = await testKeyOn(databaseUrl);
    env = gatewayProcessEnv(databaseUrl, {
      WHOLESALER_CATALOGUE: catalogueFile,
      WHOLESALER_PROBE_INTERVAL_MS: '0',
      IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_MS),
    });
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await proxy?.close();
    await mock?.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  const BODY = {
    wholesalers: WHOLESALERS.map((id) => `${id}_test`),
    items: [
      { pzn: '04114918', quantity: 2 },
      { pzn: SCENARIO_PZNS.ONLY_AT_ALLIANCE.pzn, quantity: 1 },
      { pzn: SCENARIO_PZNS.ONLY_AT_SANACORP.pzn, quantity: 1 },
    ],
  };

  function split(url: string, key: string): Promise<Response> {
    return fetch(`${url}/v1/orders/split`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': apiKey,
        'x-msv3-credentials': WHOLESALERS.map((id) => `${id}_test=("${USER}" "secret-${id}")`).join(', '),
        'idempotency-key': key,
      },
      body: JSON.stringify(BODY),
    });
  }

  const held = (wholesaler: string) => mock.orders(tenant(wholesaler), USER);

  it('finishes after a restart: one order at each wholesaler, and the answer names all three', {
    timeout: 120_000,
  }, async () => {
    const key = randomUUID();
    const before: GatewayProcess = await startGatewayProcess(env, children, 90_000);
    let killed = false;
    // The second bestellen: the mock has taken the order; the gateway dies before it hears so.
    proxy.interceptNext('bestellen', {
      after: async () =>
        proxy.interceptNext('bestellen', {
          after: async () => {
            await killAndWait(before.child);
            killed = true;
          },
        }),
    });
    const lost = await split(before.url, key).catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(Error);
    // The client sees the connection drop before the process's exit is reported.
    await until('the gateway killed at the second bestellen', () => (killed ? true : undefined), 10_000);
    expect(WHOLESALERS.map((w) => held(w).length)).toEqual([1, 1, 0]);
    const sent = { bestellen: proxy.count('bestellen'), status: proxy.count('bestellstatusAbfragen') };
    expect(sent.bestellen).toBe(2);

    const after = await startGatewayProcess(env, children, 90_000);
    // The dead process's lock on the key lapses after IDEMPOTENCY_LOCK_TIMEOUT_MS; until then: 409.
    const response = await until(
      'the lock lapsed',
      async () => {
        const answer = await split(after.url, key);
        return answer.status === 409 ? undefined : answer;
      },
      20_000,
      250,
    );
    expect(response.status, await response.clone().text()).toBe(200);
    const result = (await response.json()) as {
      status: string;
      orders: { wholesaler: string; status: string; request_id: string; order_id: string }[];
    };
    expect(result.status).toBe('complete');
    expect(result.orders.map((o) => [o.wholesaler, o.status])).toEqual(
      WHOLESALERS.map((w) => [`${w}_test`, 'confirmed']),
    );
    for (const [i, wholesaler] of WHOLESALERS.entries()) {
      expect(held(wholesaler).map((o) => o.id)).toEqual([result.orders[i]!.request_id]);
    }
    // No order was sent twice: the second was asked for, only the third was sent after the restart.
    expect(proxy.count('bestellen')).toBe(sent.bestellen + 1);
    expect(proxy.count('bestellstatusAbfragen')).toBe(sent.status + 1);
    expect(proxy.count('bestellstatusAbfragen', result.orders[1]!.request_id)).toBe(1);

    const replay = await split(after.url, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual(result);
    after.child.kill('SIGTERM');
  });
});
