import { describe, expect, it } from 'vitest';
import { walkthroughOf } from './docs-walkthrough.js';

/** docs/orders.md's walkthrough works as printed against `npm start` (test/docs-walkthrough.ts). */

describe('docs/orders.md "Walkthrough"', () => {
  const run = walkthroughOf('orders.md');

  const exchange = (method: string, path: RegExp) =>
    run().exchanges.find(
      (e) => e.request.method === method && path.test(e.request.url.replace(/^https?:\/\/[^/]+/, '')),
    )!;

  it('places three sub-orders of three types as one order', () => {
    const placed = exchange('POST', /^\/v1\/orders$/);
    expect(placed.status).toBe(200);
    expect(placed.json).toMatchObject({
      status: 'confirmed',
      placement_status: 'confirmed',
      sub_orders: [
        { order_type: 'normal', order_label: 'K1', status: 'confirmed' },
        { order_type: 'batch', order_label: 'LAGER', status: 'confirmed' },
        { order_type: 'special', order_label: 'SONDER', status: 'confirmed' },
      ],
    });
  });

  it('shows in the record what arrived per line, the split delivery on two notes', () => {
    const record = exchange('GET', /^\/v1\/orders\/GW-/).json as {
      fulfilment: { status: string };
      sub_orders: { items: { pzn: string; quantity_delivered: number; tracking_numbers: string[] }[] }[];
    };
    expect(record.fulfilment.status).toBe('fulfilled');
    const items = record.sub_orders.flatMap((sub) => sub.items);
    expect(items.map((i) => [i.pzn, i.quantity_delivered, i.tracking_numbers.length])).toEqual([
      ['04114918', 2, 1],
      ['01234562', 10, 1],
      ['09990145', 4, 2],
    ]);
  });

  it('refuses the shipping order the contract does not agree, and finds the order by PZN', () => {
    const refused = exchange('POST', /^\/v1\/orders$/);
    expect(run().exchanges.filter((e) => e.request.method === 'POST')).toHaveLength(2);
    const shipping = run().exchanges.filter((e) => e.request.method === 'POST')[1]!;
    expect(refused.status).toBe(200);
    expect(shipping.status).toBe(422);
    expect(shipping.json).toMatchObject({ error: 'order_type_not_agreed', param: 'order_type' });
    const listed = exchange('GET', /^\/v1\/orders\?pzn=09990145/).json as {
      orders: { fulfilment: { status: string } }[];
    };
    expect(listed.orders).toHaveLength(1);
    expect(listed.orders[0]!.fulfilment.status).toBe('fulfilled');
  });
});
