import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/errors.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { orderLines, storedOrderRequest, toMsv3OrderRequest } from './request.js';

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
          { pzn: '99', quantity: 1, delivery_preference: 'grouped' },
        ],
        wholesaler(2),
      ),
    ).toEqual([
      { pzn: '04114918', quantity: 3, preference: 'normal', from: [0] },
      { pzn: '00000099', quantity: 1, preference: 'grouped', from: [1] },
    ]);
  });

  it('merges a repeated PZN with the same preference, summing quantities', () => {
    const lines = orderLines(
      [
        { pzn: '4114918', quantity: 3 },
        { pzn: '1', quantity: 1 },
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
          { pzn: '1', quantity: 1 },
          { pzn: '2', quantity: 1 },
          { pzn: '00000001', quantity: 1, delivery_preference: 'disposition' },
        ],
        wholesaler(2),
      ),
    );
    expect(error).toMatchObject({
      kind: 'invalid_request',
      options: { param: 'items[2].delivery_preference' },
    });
    expect(error.message).toMatch(/items\[2\] repeats PZN 00000001 of items\[0\]/);
  });

  it('keeps quantities within the version, also after merging', () => {
    expect(refusal(() => orderLines([{ pzn: '1', quantity: 10_000 }], wholesaler(1))).options.param).toBe(
      'items[0].quantity',
    );
    expect(orderLines([{ pzn: '1', quantity: 10_000 }], wholesaler(2))[0]!.quantity).toBe(10_000);
    expect(
      refusal(() =>
        orderLines(
          [
            { pzn: '1', quantity: 9_000 },
            { pzn: '1', quantity: 1_000 },
          ],
          wholesaler(1),
        ),
      ).message,
    ).toMatch(/^items\[1\]\.quantity must be at most 9999 \(merged with items\[0\]: 10000\)/);
  });
});

describe('the bestellen request', () => {
  it('is one NORMAL sub-order with the mapped Liefervorgaben, identical when rebuilt from storage', () => {
    const lines = orderLines(
      [
        { pzn: '1', quantity: 1, delivery_preference: 'normal' },
        { pzn: '2', quantity: 1, delivery_preference: 'grouped' },
        { pzn: '3', quantity: 1, delivery_preference: 'backorder' },
        { pzn: '4', quantity: 1, delivery_preference: 'disposition' },
      ],
      wholesaler(2),
    );
    const id = '9d7e6f50-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
    const stored = JSON.parse(JSON.stringify(storedOrderRequest(id, lines)));
    const request = toMsv3OrderRequest(id, stored, 'gw');
    expect(request.subOrders).toHaveLength(1);
    expect(request.subOrders[0]).toMatchObject({ orderType: 'NORMAL', orderLabel: 'K1' });
    expect(request.subOrders[0]!.positions.map((p) => p.deliveryInstruction)).toEqual([
      'Normal',
      'MaxVerbund',
      'MaxNachlieferung',
      'MaxDispo',
    ]);
    expect(toMsv3OrderRequest(id, storedOrderRequest(id, lines), 'gw')).toEqual(request);
  });
});
