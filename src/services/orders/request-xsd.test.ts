import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validPzns } from '../../../test/pzns.js';
import { pznCheckDigit } from '../../msv3/model.js';
import { bestellen } from '../../msv3/operations/bestellen.js';
import { validateEnvelopes, xsdUnavailableReason } from '../../msv3/test-support/xsd.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { ORDER_TYPES } from '../order-types.js';
import {
  DELIVERY_PREFERENCES,
  type OrderInput,
  plannedSubOrders,
  storedOrderRequest,
  toMsv3OrderRequest,
} from './request.js';

/**
 * Every `bestellen` the order service can build (all four order types, one to five sub-orders, labels,
 * containers, merged lines) is what the original MSV3 XSDs of both versions accept. Skipped, saying why,
 * without xmllint or the XSDs (test-support/xsd.ts).
 */

const wholesaler = (version: 1 | 2): ResolvedWholesaler => ({
  id: 'phoenix',
  name: 'Phoenix',
  version,
  route: 'sandbox',
  endpoint: { target: 'phoenix', baseUrl: 'http://127.0.0.1:9', version },
  custom: null,
});

const label = fc.stringMatching(/^[A-Z0-9+_-]{1,20}$/);
const item = fc.record({
  pzn: fc
    .integer({ min: 1, max: 9_999_999 })
    .map((stem) => `${String(stem).padStart(7, '0')}0`)
    .filter((pzn) => pznCheckDigit(pzn) !== null)
    .map((pzn) => `${pzn.slice(0, 7)}${pznCheckDigit(pzn)}`),
  quantity: fc.integer({ min: 1, max: 999 }),
  delivery_preference: fc.constantFrom(...DELIVERY_PREFERENCES),
});
const subOrder = fc.constantFrom(...ORDER_TYPES).chain((type) =>
  fc.record(
    {
      order_type: fc.constant(type),
      order_label: label,
      ...(type === 'shipping' ? { container_id: label } : {}),
      items: fc.uniqueArray(item, { minLength: 1, maxLength: 12, selector: (i) => i.pzn }),
    },
    { requiredKeys: type === 'shipping' ? ['order_type', 'container_id', 'items'] : ['order_type', 'items'] },
  ),
);
const order = fc.array(subOrder, { minLength: 1, maxLength: 5 });

describe.skipIf(xsdUnavailableReason !== null)(
  'the orders the gateway sends, against the original XSD',
  () => {
    it.each([1, 2] as const)(
      'validate in MSV3 version %i: every type, one to five sub-orders',
      async (version) => {
        const ids = fc.sample(fc.uuid({ version: 4 }), 120);
        const orders: OrderInput['sub_orders'][] = fc.sample(order, 120);
        // Each type with one to five sub-orders, besides the random mixes.
        for (const type of ORDER_TYPES) {
          for (let n = 1; n <= 5; n++) {
            orders.push(
              Array.from({ length: n }, (_, i) => ({
                order_type: type,
                ...(type === 'shipping' ? { container_id: `KISTE${i}` } : {}),
                items: [{ pzn: validPzns(1, 4114918 + i)[0]!, quantity: 1 + i }],
              })),
            );
          }
        }
        const envelopes = orders.map((subOrders, i) => {
          const id = ids[i % ids.length]!;
          const request = storedOrderRequest(
            id,
            plannedSubOrders({ sub_orders: subOrders }, wholesaler(version), 1000),
          );
          return bestellen.encodeRequest(version, toMsv3OrderRequest(id, request, 'msv3-gateway test'));
        });
        const results = await validateEnvelopes(version, envelopes);
        const invalid = results.flatMap((r, i) => (r.valid ? [] : [`${r.errors}\n${envelopes[i]}`]));
        expect(invalid.slice(0, 1)).toEqual([]);
      },
    );
  },
);
