import { describe, expect, it } from 'vitest';
import { deliveryNoticeFixture } from './test-support/fixtures.js';
import { hasShortages, toDeliveryHistoryEntryJson, toDeliveryNoticeJson } from './view.js';

describe('toDeliveryNoticeJson', () => {
  it('maps the fields of docs/msv3.md "Delivery notices": delivery-note number, barcode, order type, document date', () => {
    const json = toDeliveryNoticeJson(
      deliveryNoticeFixture({ orderType: 'STAPEL', documentDate: '2025-03-18+01:00' }),
    );
    expect(json).toMatchObject({
      tracking_number: 'LS-2025-000123',
      barcode: '01*LS2025000123',
      order_type: 'batch',
      date: '2025-03-18',
      has_shortages: true,
    });
    expect(toDeliveryNoticeJson(deliveryNoticeFixture({ orderType: 'VERSAND' })).order_type).toBe('shipping');
    expect(toDeliveryNoticeJson(deliveryNoticeFixture({ orderType: 'SONDER' })).order_type).toBe('special');
  });

  it('sums the lines of one PZN into one item, in order of first appearance', () => {
    expect(toDeliveryNoticeJson(deliveryNoticeFixture()).items).toEqual([
      { pzn: '04114918', quantity_delivered: 3, shortages: 1, article_name: 'IBUPROFEN 400 20 ST' },
      { pzn: '01234562', quantity_delivered: 0, shortages: 10, article_name: null },
    ]);
  });

  it('keeps every printed line with batches, expiry, parcels and sub-order ids', () => {
    const [first, second] = toDeliveryNoticeJson(deliveryNoticeFixture()).lines;
    expect(first).toEqual({
      line: 1,
      pzn: '04114918',
      article_name: 'IBUPROFEN 400 20 ST',
      container_id: null,
      quantity_delivered: 2,
      shortages: 0,
      delivered: [
        {
          quantity: 2,
          batch: 'CH-A1',
          expiry_date: '2027-11-30',
          parcel_number: 'P0001',
          sub_order_id: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f',
        },
      ],
      shortage_parts: [],
    });
    expect(second?.shortage_parts).toEqual([
      { quantity: 1, sub_order_id: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f' },
    ]);
  });

  it('shows the expected arrival in German local time with the original offset, and the document id', () => {
    const json = toDeliveryNoticeJson(
      deliveryNoticeFixture({
        deliveryTime: '2025-03-18T13:30:00Z',
        documentId: 'ABCDEF00-0000-4000-8000-000000000001',
      }),
    );
    expect(json).toMatchObject({
      estimated_at: '2025-03-18T14:30:00',
      estimated_at_offset: 'Z',
      tour: 'Mittagstour',
      order_label: 'K1',
      document_id: 'abcdef00-0000-4000-8000-000000000001',
    });
  });

  it('gives null for what the wholesaler left out', () => {
    const json = toDeliveryNoticeJson(
      deliveryNoticeFixture({ deliveryTime: undefined, tour: undefined, documentId: undefined }),
    );
    expect(json).toMatchObject({
      estimated_at: null,
      estimated_at_offset: null,
      tour: null,
      document_id: null,
    });
  });
});

describe('hasShortages', () => {
  it('is true when the flag is set or any line has a shortage', () => {
    const withShortage = deliveryNoticeFixture({ hasShortages: false });
    expect(hasShortages(withShortage)).toBe(true);
    const none = deliveryNoticeFixture({
      hasShortages: false,
      lines: [{ pzn: '04114918', delivered: [{ quantity: 1 }], shortages: [] }],
    });
    expect(hasShortages(none)).toBe(false);
    expect(hasShortages({ ...none, hasShortages: true })).toBe(true);
  });
});

describe('toDeliveryHistoryEntryJson', () => {
  it('adds when the gateway first and last saw the notice and when it was confirmed', () => {
    const entry = toDeliveryHistoryEntryJson({
      notice: deliveryNoticeFixture(),
      firstSeenAt: Date.UTC(2025, 2, 18, 11, 0, 0),
      lastSeenAt: Date.UTC(2025, 2, 18, 12, 0, 0),
      confirmedAt: null,
    });
    expect(entry).toMatchObject({
      tracking_number: 'LS-2025-000123',
      first_seen_at: '2025-03-18T11:00:00.000Z',
      last_seen_at: '2025-03-18T12:00:00.000Z',
      confirmed_at: null,
    });
  });
});
