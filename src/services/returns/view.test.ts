import { describe, expect, it } from 'vitest';
import { RETOURE_GRUENDE, RETOUREN_ANTEIL_TYPEN } from '../../msv3/operations/retourenavis.js';
import {
  RETURN_REASONS,
  RETURN_VERDICTS,
  toAssessedReturnItem,
  toReturnPortion,
  toReturnPositions,
} from './view.js';

describe('return reasons', () => {
  it('map every return reason of docs/msv3.md "Returns" to a distinct RetoureGrund, covering all of them', () => {
    expect(RETURN_REASONS).toEqual({
      order_error: 'Bestellfehler',
      not_delivered: 'BerechnetNichtGeliefert',
      damaged: 'Beschaedigt',
      expiry_too_short: 'VerfallZuKurz',
      over_delivered: 'ZuvielGeliefert',
    });
    expect(new Set(Object.values(RETURN_REASONS))).toEqual(new Set(RETOURE_GRUENDE));
  });
});

describe('return verdicts', () => {
  it('cover every RetourenAnteilTyp; exactly the three Akzeptiert values are accepted', () => {
    expect(Object.keys(RETURN_VERDICTS).sort()).toEqual([...RETOUREN_ANTEIL_TYPEN].sort());
    const accepted = RETOUREN_ANTEIL_TYPEN.filter((t) => RETURN_VERDICTS[t].accepted);
    expect(accepted).toEqual([
      'RetoureAkzeptiert',
      'RetoureAkzeptiertRueckspracheNoetig',
      'RetoureAkzeptiertKeineRuecksendungNoetig',
    ]);
    const names = Object.values(RETURN_VERDICTS).map((v) => v.verdict);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z_]+$/);
  });
});

describe('toReturnPositions', () => {
  it('numbers items from 1 and pads PZNs', () => {
    const positions = toReturnPositions([
      {
        tracking_number: 'LS1',
        pzn: '4114918',
        quantity: 2,
        reason: 'damaged',
        batch: 'B1',
        expiry_date: '2027-01-31',
      },
      { tracking_number: 'LS1', pzn: '4114918', quantity: 1, reason: 'over_delivered' },
    ]);
    expect(positions).toEqual([
      {
        positionRef: 1,
        deliveryNoteNumber: 'LS1',
        pzn: '04114918',
        quantity: 2,
        reason: 'Beschaedigt',
        batch: 'B1',
        expiryDate: '2027-01-31',
      },
      {
        positionRef: 2,
        deliveryNoteNumber: 'LS1',
        pzn: '04114918',
        quantity: 1,
        reason: 'ZuvielGeliefert',
        batch: undefined,
        expiryDate: undefined,
      },
    ]);
  });
});

describe('answers', () => {
  const position = {
    positionRef: 2,
    deliveryNoteNumber: 'LS1',
    pzn: '04114918',
    quantity: 1,
    reason: 'VerfallZuKurz' as const,
  };

  it('turn an assessed position into an item with verdict and accepted flag', () => {
    expect(toAssessedReturnItem({ ...position, verdict: 'MengeUeberschritten' })).toEqual({
      position: 2,
      tracking_number: 'LS1',
      pzn: '04114918',
      quantity: 1,
      reason: 'expiry_too_short',
      batch: null,
      expiry_date: null,
      verdict: 'quantity_exceeds_delivery',
      accepted: false,
    });
  });

  it('turn a portion into reference, slip, local pick-up time and items sorted by position', () => {
    const portion = toReturnPortion({
      verdict: 'RetoureAkzeptiert',
      wholesalerReference: 'R-17',
      documentId: '9E8D7C6B-5A49-4382-9170-6F5E4D3C2B1A',
      pickupTime: '2025-03-19T09:00:00Z',
      positions: [position, { ...position, positionRef: 1 }],
    });
    expect(portion).toMatchObject({
      verdict: 'accepted',
      accepted: true,
      reference: 'R-17',
      document_id: '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a',
      pickup_at: '2025-03-19T10:00:00',
      pickup_at_offset: 'Z',
      tour: null,
    });
    expect(portion.items.map((i) => i.position)).toEqual([1, 2]);
  });
});
