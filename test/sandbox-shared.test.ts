import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchPostgresDatabase, postgresUrl, warnSkipped } from './db.js';
import {
  type GatewayProcess,
  gatewayProcessEnv,
  killAndWait,
  startGatewayProcess,
  testKeyOn,
} from './gateway-process.js';
import { sandboxApi } from './sandbox-api.js';

/**
 * Two gateway processes on one PostgreSQL database share one sandbox (docs/sandbox.md "What the sandbox
 * keeps"): an order placed through A is known through B, with its delivery notice, PDF and confirmation.
 */
describe('one sandbox for two gateway processes on PostgreSQL', () => {
  if (postgresUrl() === undefined) {
    warnSkipped('TEST_DATABASE_URL', 'PostgreSQL');
    it.skip('skipped: TEST_DATABASE_URL is not set, so two gateways sharing a sandbox are not tested', () => {});
    return;
  }
  let scratch: Awaited<ReturnType<typeof createScratchPostgresDatabase>> | undefined;
  const children: ChildProcess[] = [];
  let a: GatewayProcess;
  let b: GatewayProcess;
  let key: string;

  beforeAll(async () => {
    scratch = await createScratchPostgresDatabase();
    key = await testKeyOn(scratch.url);
    const env = gatewayProcessEnv(scratch.url);
    [a, b] = await Promise.all([
      startGatewayProcess(env, children, 60_000),
      startGatewayProcess(env, children, 60_000),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(children.map(killAndWait));
    await scratch?.dispose();
  });

  it('answers status, deliveries, PDF and confirmation through B for an order placed through A', {
    timeout: 60_000,
  }, async () => {
    const throughA = sandboxApi(a.url, key);
    const throughB = sandboxApi(b.url, key);
    const orderId = await throughA.order([{ pzn: '04114918', quantity: 2 }]);
    const delivery = await throughA.newDelivery([]);

    expect(await throughB.status(orderId)).toEqual(await throughA.status(orderId));
    expect(await throughB.status(orderId)).toMatchObject({ order_id: orderId, status: 'available' });
    expect((await throughB.deliveries()).map((d) => d.tracking_number)).toEqual([delivery.tracking_number]);
    expect((await throughB.pdf(delivery.document_id)).equals(await throughA.pdf(delivery.document_id))).toBe(
      true,
    );
    await throughB.confirm([delivery.tracking_number]);
    expect(await throughA.deliveries()).toEqual([]);

    // Orders through both at once: each notice number is given out once.
    await Promise.all(
      [throughA, throughB, throughA, throughB].map((api) => api.order([{ pzn: '04114918', quantity: 1 }])),
    );
    const numbers = (await throughB.deliveries()).map((d) => d.tracking_number);
    expect(new Set([...numbers, delivery.tracking_number]).size).toBe(5);
    expect((await throughA.statusEvents()).some((e) => e.status === 'unknown')).toBe(false);
  });
});
