import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import {
  ConfirmBodySchema,
  ConfirmResponseSchema,
  DeliveriesResponseSchema,
  HistoryQuerySchema,
  HistoryResponseSchema,
} from './deliveries.js';
import {
  AnnounceBodySchema,
  OfferBodySchema,
  OfferResponseSchema,
  ReturnAnnouncementResponseSchema,
  ReturnBodySchema,
  ReturnEnquiryResponseSchema,
} from './returns.js';

// The OpenAPI document shows these examples; an example the schema refuses would mislead every reader.
const SCHEMAS: Record<string, TSchema> = {
  DeliveriesResponseSchema,
  ConfirmBodySchema,
  ConfirmResponseSchema,
  HistoryQuerySchema,
  HistoryResponseSchema,
  ReturnBodySchema,
  ReturnEnquiryResponseSchema,
  AnnounceBodySchema,
  ReturnAnnouncementResponseSchema,
  OfferBodySchema,
  OfferResponseSchema,
};

describe('delivery and return schemas', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name} carries examples that it accepts`, () => {
      const examples = (schema as { examples?: unknown[] }).examples;
      expect(examples?.length).toBeGreaterThan(0);
      for (const example of examples ?? []) expect([...Value.Errors(schema, example)]).toEqual([]);
    });
  }

  it('refuse what MSV3 would refuse', () => {
    const item = { tracking_number: 'LS1', pzn: '4114918', quantity: 1, reason: 'damaged' };
    const bad = [
      [ReturnBodySchema, { wholesaler: 'phoenix', items: [] }],
      [ReturnBodySchema, { wholesaler: 'phoenix', items: [{ ...item, reason: 'Beschaedigt' }] }],
      [ReturnBodySchema, { wholesaler: 'phoenix', items: [{ ...item, quantity: 10_000 }] }],
      [ReturnBodySchema, { wholesaler: 'phoenix', items: [{ ...item, tracking_number: 'LS 1' }] }],
      [ReturnBodySchema, { wholesaler: 'phoenix', items: [{ ...item, expiry_date: '31.01.2027' }] }],
      [ReturnBodySchema, { wholesaler: 'phoenix', items: Array(1000).fill(item) }],
      [OfferBodySchema, { wholesaler: 'phoenix', items: Array(1001).fill({ pzn: '1', quantity: 1 }) }],
      [OfferBodySchema, { wholesaler: 'phoenix', items: [{ pzn: '123456789', quantity: 1 }] }],
      [ConfirmBodySchema, { wholesaler: 'phoenix', tracking_numbers: [] }],
      [ConfirmBodySchema, { wholesaler: 'phoenix', tracking_numbers: Array(1000).fill('LS1') }],
      [ConfirmBodySchema, { wholesaler: 'phoenix', tracking_numbers: ['x'.repeat(31)] }],
      [HistoryQuerySchema, { wholesaler: 'phoenix', limit: 20, barcode: 'LS2025' }],
      [HistoryQuerySchema, { wholesaler: 'phoenix', limit: 101 }],
    ] as const;
    for (const [schema, value] of bad) expect(Value.Check(schema, value)).toBe(false);
    expect(Value.Check(ReturnBodySchema, { wholesaler: 'phoenix', items: Array(999).fill(item) })).toBe(true);
    expect(Value.Check(HistoryQuerySchema, { wholesaler: 'phoenix', limit: 20, barcode: '0#LS2025' })).toBe(
      true,
    );
  });
});
