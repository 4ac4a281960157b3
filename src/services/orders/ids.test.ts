import { describe, expect, it } from 'vitest';
import { UUID_PATTERN } from '../../msv3/model.js';
import {
  bestellungIdFor,
  GATEWAY_ORDER_ID_PATTERN,
  gatewayOrderId,
  subOrderIdFor,
  supportIdFor,
  uuidFromHash,
} from './ids.js';

const scope = {
  accountId: 'acct_1',
  keyId: 'key_1',
  mode: 'test' as const,
  idempotencyKey: 'order-42',
  firstUsedAt: 1_767_600_000_000,
};

describe('order ids', () => {
  it('derives the same Bestellung Id from the same key, as a version 8 UUID', () => {
    const id = bestellungIdFor(scope);
    expect(id).toMatch(UUID_PATTERN);
    expect(id[14]).toBe('8');
    expect('89ab').toContain(id[19]);
    expect(bestellungIdFor({ ...scope })).toBe(id);
  });

  it('derives another Bestellung Id for another account, API key, mode, key or first use', () => {
    const id = bestellungIdFor(scope);
    for (const change of [
      { accountId: 'acct_2' },
      { keyId: 'key_2' },
      { mode: 'live' as const },
      { idempotencyKey: 'order-43' },
      { firstUsedAt: scope.firstUsedAt + 1 },
    ]) {
      expect(bestellungIdFor({ ...scope, ...change })).not.toBe(id);
    }
  });

  it('draws a fresh Bestellung Id without a key', () => {
    expect(bestellungIdFor(undefined)).not.toBe(bestellungIdFor(undefined));
  });

  it('derives the gateway order id, the sub-order Id and the support ids from the Bestellung Id', () => {
    const id = bestellungIdFor(scope);
    expect(gatewayOrderId(id)).toMatch(new RegExp(GATEWAY_ORDER_ID_PATTERN));
    expect(gatewayOrderId(id)).toBe(gatewayOrderId(id));
    expect(gatewayOrderId(id)).not.toBe(gatewayOrderId(bestellungIdFor(undefined)));
    expect(subOrderIdFor(id, 0)).toMatch(UUID_PATTERN);
    expect(subOrderIdFor(id, 0)).not.toBe(id);
    expect(new Set([0, 1, 2, 3, 4].map((i) => subOrderIdFor(id, i))).size).toBe(5);
    expect(subOrderIdFor(id, 2)).toBe(subOrderIdFor(id, 2));
    const support = supportIdFor(id);
    expect(support).toBeGreaterThanOrEqual(1);
    expect(support).toBeLessThanOrEqual(999_999);
    expect(supportIdFor(id)).toBe(support);
  });
});

describe('sub-order ids', () => {
  it('keep the first sub-order id of orders stored before sub-orders existed', () => {
    // The Id the gateway derived for its one sub-order before orders could have several.
    expect(subOrderIdFor('9d7e6f50-1a2b-4c3d-8e9f-0a1b2c3d4e5f', 0)).toBe(
      uuidFromHash('msv3-gateway/auftrag/v1', '9d7e6f50-1a2b-4c3d-8e9f-0a1b2c3d4e5f', '0'),
    );
  });
});
