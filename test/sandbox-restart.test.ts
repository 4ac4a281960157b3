import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayProcessEnv, startGatewayProcess, testKeyOn } from './gateway-process.js';
import { sandboxApi } from './sandbox-api.js';

/**
 * The sandbox keeps its state in the gateway's database (docs/sandbox.md "What the sandbox keeps"): a
 * gateway on a SQLite file is stopped and another started on the same file; the order, its delivery
 * notice and its PDF are as they were, the next notice gets the next number, and no false
 * `order.status_changed` appears.
 */
describe('the sandbox across a gateway restart', () => {
  let folder: string;
  let env: NodeJS.ProcessEnv;
  let key: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-sandbox-restart-'));
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    key = await testKeyOn(databaseUrl);
    env = gatewayProcessEnv(databaseUrl);
  });
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it('keeps orders, notices, history and PDFs, and gives the next notice a higher number', {
    timeout: 120_000,
  }, async () => {
    const before = await startGatewayProcess(env, children, 60_000);
    const first = sandboxApi(before.url, key);
    const orderId = await first.order([
      { pzn: '04114918', quantity: 3 },
      { pzn: '09990122', quantity: 2 },
    ]);
    const delivery = await first.newDelivery([]);
    const status = await first.status(orderId);
    const deliveries = await first.deliveries();
    const history = await first.history();
    const pdf = await first.pdf(delivery.document_id);
    const events = await first.statusEvents();
    expect(status).toMatchObject({ order_id: orderId, status: 'available' });

    const stopped = new Promise((resolve) => before.child.once('exit', resolve));
    before.child.kill('SIGTERM');
    await stopped;

    const after = await startGatewayProcess(env, children, 60_000);
    const second = sandboxApi(after.url, key);
    expect(await second.status(orderId)).toEqual(status);
    expect(await second.deliveries()).toEqual(deliveries);
    // The history also says when this gateway last saw each notice: it saw them again just now.
    expect(withoutLastSeen(await second.history())).toEqual(withoutLastSeen(history));
    expect((await second.pdf(delivery.document_id)).equals(pdf)).toBe(true);

    await second.order([{ pzn: '04114918', quantity: 1 }]);
    const next = await second.newDelivery([delivery.tracking_number]);
    expect(next.tracking_number).not.toBe(delivery.tracking_number);
    expect(Number(next.tracking_number.slice(-6))).toBeGreaterThan(
      Number(delivery.tracking_number.slice(-6)),
    );
    const eventsAfter = await second.statusEvents();
    expect(eventsAfter.filter((e) => e.order_id === orderId)).toEqual(
      events.filter((e) => e.order_id === orderId),
    );
    expect(eventsAfter.some((e) => e.status === 'unknown')).toBe(false);
    after.child.kill('SIGTERM');
  });
});

function withoutLastSeen(history: unknown): unknown {
  const { deliveries, ...rest } = history as { deliveries: Record<string, unknown>[] };
  return { ...rest, deliveries: deliveries.map(({ last_seen_at: _, ...delivery }) => delivery) };
}
