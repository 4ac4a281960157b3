import { describe, expect, it } from 'vitest';
import { walkthroughOf } from './docs-walkthrough.js';

interface Split {
  status: string;
  orders: {
    wholesaler: string;
    status: string;
    order_id: string;
    items: { pzn: string; quantity: number }[];
  }[];
  lines: {
    pzn: string;
    allocations: { wholesaler: string; quantity: number }[];
    quantity_undeliverable: number;
  }[];
}

/** docs/split-orders.md's walkthrough works as printed against `npm start` (test/docs-walkthrough.ts). */
describe('docs/split-orders.md "Walkthrough"', () => {
  const run = walkthroughOf('split-orders.md');

  const splits = () => run().exchanges.filter((e) => e.request.url.includes('/v1/orders/split'));

  it('plans the dry run as the page prints it, placing nothing', () => {
    const dryRun = splits()[0]!;
    expect(dryRun.status).toBe(200);
    const plan = dryRun.json as Split;
    expect(plan.status).toBe('dry_run');
    expect(
      plan.lines.map((l) => [
        l.pzn,
        l.allocations.map((a) => `${a.wholesaler} ${a.quantity}`),
        l.quantity_undeliverable,
      ]),
    ).toEqual([
      ['04114918', ['phoenix 2'], 0],
      ['09990300', ['alliance 1'], 0],
      ['09990317', ['sanacorp 1'], 0],
      ['09990323', ['phoenix 3', 'alliance 4', 'sanacorp 5'], 3],
    ]);
  });

  it('places one order at each wholesaler, visible as an ordinary order, and replays the split', () => {
    const [, placed, replayed] = splits();
    expect(placed!.status).toBe(200);
    const split = placed!.json as Split;
    expect(split.status).toBe('complete');
    expect(
      split.orders.map((o) => [o.wholesaler, o.status, o.items.map((i) => `${i.pzn} x${i.quantity}`)]),
    ).toEqual([
      ['phoenix', 'confirmed', ['04114918 x2', '09990323 x3']],
      ['alliance', 'confirmed', ['09990300 x1', '09990323 x4']],
      ['sanacorp', 'confirmed', ['09990317 x1', '09990323 x5']],
    ]);
    const record = run().exchanges.find((e) =>
      e.request.url.endsWith(`/v1/orders/${split.orders[1]!.order_id}`),
    )!;
    expect(record.status).toBe(200);
    expect(record.json).toMatchObject({ wholesaler: 'alliance', placement_status: 'confirmed' });
    expect(replayed!.status).toBe(200);
    expect(replayed!.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed!.json).toEqual(split);
  });
});
