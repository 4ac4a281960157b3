import type { DeliveryNotice } from '../../../msv3/operations/lieferavis.js';

/**
 * Delivery notices for tests: a complete one by default (two lines for the same PZN, a batch, a
 * shortage, a PDF), with any field replaced by `overrides`.
 */
export function deliveryNoticeFixture(overrides: Partial<DeliveryNotice> = {}): DeliveryNotice {
  return {
    deliveryNoteNumber: 'LS-2025-000123',
    barcodeReference: '01*LS2025000123',
    orderType: 'NORMAL',
    orderLabel: 'K1',
    documentDate: '2025-03-18',
    deliveryTime: '2025-03-18T14:30:00+01:00',
    tour: 'Mittagstour',
    hasShortages: true,
    lines: [
      {
        pzn: '04114918',
        articleName: 'IBUPROFEN 400 20 ST',
        delivered: [
          {
            orderId: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f',
            quantity: 2,
            parcelNumber: 'P0001',
            batch: 'CH-A1',
            expiryDate: '2027-11-30',
          },
        ],
        shortages: [],
      },
      {
        pzn: '04114918',
        delivered: [{ quantity: 1, batch: 'CH-B2' }],
        shortages: [{ orderId: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f', quantity: 1 }],
      },
      { pzn: '01234562', delivered: [], shortages: [{ quantity: 10 }] },
    ],
    documentId: '5b0f1f5e-8c1a-4f0e-9d3a-1c2b3d4e5f60',
    ...overrides,
  };
}
