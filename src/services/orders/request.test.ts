import { describe, expect, it } from 'vitest';
import { validPzns } from '../../../test/pzns.js';
import { ApiError } from '../../core/errors.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { subOrderIdFor } from './ids.js';
import {
  orderLines,
  plannedSubOrders,
  storedOrderRequest,
  storedRequestOf,
  toMsv3OrderRequest,
} from './request.js';

function wholesaler(version: 1 | 2): ResolvedWholesaler {
  return {
    id: version === 1 ? 'gehe' : 'phoenix',
    name: 'x',
    version,
    route: 'sandbox',
    endpoint: { target: 'x', baseUrl: 'http://127.0.0.1:9', version },
    custom: null,
  };
}

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('orderLines', () => {
  it('pads PZNs, defaults the preference to normal and keeps request order', () => {
    expect(
      orderLines(
        [
          { pzn: '4114918', quantity: 3 },
          { pzn: '98', quantity: 1, delivery_preference: 'grouped' },
        ],
        wholesaler(2),
      ),
    ).toEqual([
      { pzn: '04114918', quantity: 3, preference: 'normal', from: [0] },
      { pzn: '00000098', quantity: 1, preference: 'grouped', from: [1] },
    ]);
  });

  it('merges a repeated PZN with the same preference, summing quantities', () => {
    const lines = orderLines(
      [
        { pzn: '4114918', quantity: 3 },
        { pzn: '17', quantity: 1 },
        { pzn: '04114918', quantity: 2, delivery_preference: 'normal' },
      ],
      wholesaler(2),
    );
    expect(lines[0]).toEqual({ pzn: '04114918', quantity: 5, preference: 'normal', from: [0, 2] });
    expect(lines).toHaveLength(2);
  });

  it('refuses a repeated PZN with another preference, naming the later item', () => {
    const error = refusal(() =>
      orderLines(
        [
          { pzn: '17', quantity: 1 },
          { pzn: '23', quantity: 1 },
          { pzn: '00000017', quantity: 1, delivery_preference: 'disposition' },
        ],
        wholesaler(2),
      ),
    );
    expect(error).toMatchObject({
      kind: 'invalid_request',
      options: { param: 'items[2].delivery_preference' },
    });
    expect(error.message).toMatch(/items\[2\] repeats PZN 00000017 of items\[0\]/);
  });

  it('keeps quantities within the version, also after merging', () => {
    expect(refusal(() => orderLines([{ pzn: '17', quantity: 10_000 }], wholesaler(1))).options.param).toBe(
      'items[0].quantity',
    );
    expect(orderLines([{ pzn: '17', quantity: 10_000 }], wholesaler(2))[0]!.quantity).toBe(10_000);
    expect(
      refusal(() =>
        orderLines(
          [
            { pzn: '17', quantity: 9_000 },
            { pzn: '17', quantity: 1_000 },
          ],
          wholesaler(1),
        ),
      ).message,
    ).toMatch(/^items\[1\]\.quantity must be at most 9999 \(merged with items\[0\]: 10000\)/);
  });
});

describe('plannedSubOrders', () => {
  const items = [{ pzn: '4114918', quantity: 3 }];

  it('reads `items` as one normal sub-order with the default label', () => {
    expect(plannedSubOrders({ items }, wholesaler(2), 500)).toEqual([
      {
        type: 'normal',
        label: 'K1',
        labelChosen: false,
        lines: [{ pzn: '04114918', quantity: 3, preference: 'normal', from: [0] }],
        at: '',
      },
    ]);
  });

  it('gives each type its default label; a chosen label counts, the default does not', () => {
    const planned = plannedSubOrders(
      {
        sub_orders: [
          { order_type: 'batch', items },
          { order_type: 'special', order_label: 'SONDER', items },
          { order_type: 'normal', order_label: 'KUEHL', items },
          { order_type: 'shipping', container_id: 'KISTE7', items },
        ],
      },
      wholesaler(2),
      500,
    );
    expect(planned.map((sub) => [sub.type, sub.label, sub.labelChosen, sub.containerId, sub.at])).toEqual([
      ['batch', 'STAPEL', false, undefined, 'sub_orders[0]'],
      ['special', 'SONDER', false, undefined, 'sub_orders[1]'],
      ['normal', 'KUEHL', true, undefined, 'sub_orders[2]'],
      ['shipping', 'VERSAND', false, 'KISTE7', 'sub_orders[3]'],
    ]);
  });

  it('merges a repeated PZN within a sub-order only, and names the sub-order in every refusal', () => {
    const planned = plannedSubOrders(
      {
        sub_orders: [{ items: [...items, { pzn: '04114918', quantity: 2 }] }, { order_type: 'batch', items }],
      },
      wholesaler(2),
      500,
    );
    expect(planned.map((sub) => sub.lines.map((l) => [l.pzn, l.quantity, l.from]))).toEqual([
      [['04114918', 5, [0, 1]]],
      [['04114918', 3, [0]]],
    ]);
    const error = refusal(() =>
      plannedSubOrders(
        { sub_orders: [{ items }, { items: [items[0]!, { pzn: '17', quantity: 10_000 }] }] },
        wholesaler(1),
        500,
      ),
    );
    expect(error.options.param).toBe('sub_orders[1].items[1].quantity');
    expect(error.message).toMatch(/^sub_orders\[1\]\.items\[1\]\.quantity must be at most 9999/);
  });

  it('needs a container for shipping and refuses one elsewhere, naming where', () => {
    expect(
      refusal(() => plannedSubOrders({ order_type: 'shipping', items }, wholesaler(2), 500)).options,
    ).toMatchObject({
      param: 'container_id',
    });
    expect(
      refusal(() =>
        plannedSubOrders({ sub_orders: [{ items }, { container_id: 'KISTE7', items }] }, wholesaler(2), 500),
      ).options.param,
    ).toBe('sub_orders[1].container_id');
  });

  it('takes `items` or `sub_orders`, exactly one, and the sub-order fields inside the sub-orders', () => {
    expect(refusal(() => plannedSubOrders({}, wholesaler(2), 500)).options.param).toBe('items');
    expect(
      refusal(() => plannedSubOrders({ items, sub_orders: [{ items }] }, wholesaler(2), 500)).options.param,
    ).toBe('items');
    expect(
      refusal(() => plannedSubOrders({ order_label: 'K2', sub_orders: [{ items }] }, wholesaler(2), 500))
        .options.param,
    ).toBe('order_label');
  });

  it('counts positions across sub-orders against the limit, after merging', () => {
    const sub = (n: number) => ({ items: validPzns(n).map((pzn) => ({ pzn, quantity: 1 })) });
    expect(plannedSubOrders({ sub_orders: [sub(3), sub(2)] }, wholesaler(2), 5)).toHaveLength(2);
    const error = refusal(() => plannedSubOrders({ sub_orders: [sub(3), sub(3)] }, wholesaler(2), 5));
    expect(error.options.param).toBe('sub_orders');
    expect(error.message).toMatch(/6 positions .* at most 5/);
  });
});

describe('the bestellen request', () => {
  const id = '9d7e6f50-1a2b-4c3d-8e9f-0a1b2c3d4e5f';

  it('maps the Liefervorgaben and is identical when rebuilt from storage', () => {
    const planned = plannedSubOrders(
      {
        items: [
          { pzn: '17', quantity: 1, delivery_preference: 'normal' },
          { pzn: '23', quantity: 1, delivery_preference: 'grouped' },
          { pzn: '46', quantity: 1, delivery_preference: 'backorder' },
          { pzn: '98', quantity: 1, delivery_preference: 'disposition' },
        ],
      },
      wholesaler(2),
      500,
    );
    const stored = JSON.parse(JSON.stringify(storedOrderRequest(id, planned)));
    const request = toMsv3OrderRequest(id, storedRequestOf(stored), 'gw');
    expect(request.subOrders).toHaveLength(1);
    expect(request.subOrders[0]).toMatchObject({ orderType: 'NORMAL', orderLabel: 'K1' });
    expect(request.subOrders[0]!.positions.map((p) => p.deliveryInstruction)).toEqual([
      'Normal',
      'MaxVerbund',
      'MaxNachlieferung',
      'MaxDispo',
    ]);
    expect(toMsv3OrderRequest(id, storedOrderRequest(id, planned), 'gw')).toEqual(request);
  });

  it('sends every sub-order with its type, label, container and derived ids', () => {
    const planned = plannedSubOrders(
      {
        sub_orders: [
          { items: [{ pzn: '17', quantity: 1 }] },
          { order_type: 'batch', order_label: 'LAGER', items: [{ pzn: '17', quantity: 2 }] },
          { order_type: 'shipping', container_id: 'KISTE7', items: [{ pzn: '23', quantity: 3 }] },
        ],
      },
      wholesaler(2),
      500,
    );
    const request = toMsv3OrderRequest(id, storedOrderRequest(id, planned), 'gw');
    expect(request.subOrders.map((s) => [s.orderType, s.orderLabel, s.containerId])).toEqual([
      ['NORMAL', 'K1', undefined],
      ['STAPEL', 'LAGER', undefined],
      ['VERSAND', 'VERSAND', 'KISTE7'],
    ]);
    expect(request.subOrders.map((s) => s.id)).toEqual([0, 1, 2].map((i) => subOrderIdFor(id, i)));
    expect(new Set(request.subOrders.map((s) => s.supportId)).size).toBe(3);
  });

  it('reads an order stored before sub-orders existed as its one NORMAL sub-order, with the same bytes', () => {
    const old = {
      supportId: 4711,
      subOrder: { id: subOrderIdFor(id, 0), orderLabel: 'K1', supportId: 815 },
      lines: [{ pzn: '04114918', quantity: 3, preference: 'normal', from: [0] }],
    };
    expect(toMsv3OrderRequest(id, storedRequestOf(old), 'gw')).toEqual({
      clientSoftwareId: 'gw',
      id,
      supportId: 4711,
      subOrders: [
        {
          id: subOrderIdFor(id, 0),
          orderType: 'NORMAL',
          orderLabel: 'K1',
          supportId: 815,
          positions: [{ pzn: '04114918', quantity: 3, deliveryInstruction: 'Normal' }],
        },
      ],
    });
  });
});
