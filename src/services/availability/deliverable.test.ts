import { describe, expect, it } from 'vitest';
import type { DeliveryPortion } from '../delivery-parts.js';
import { deliverable } from './deliverable.js';
import type { AvailabilityItem } from './single.js';

const portion = (
  type: string,
  quantity: number | null,
  estimated_at: string | null = null,
): DeliveryPortion => ({
  type,
  quantity,
  tour: null,
  estimated_at,
  estimated_at_offset: null,
  reason: null,
  tour_deviation: false,
});

const item = (deliveries: DeliveryPortion[], extra: Partial<AvailabilityItem> = {}): AvailabilityItem => ({
  pzn: '04114918',
  quantity_requested: 10,
  available: false,
  deliveries,
  substitution: null,
  invalid_pzn: null,
  ...extra,
});

describe('deliverable', () => {
  it('counts normal and network portions, not back orders, with the earliest time', () => {
    const answer = item([
      portion('normal', 3, '2026-11-30T14:30:00'),
      portion('network', 4, '2026-11-30T10:00:00'),
      portion('backorder', 3),
    ]);
    expect(deliverable(answer)).toEqual({ units: 7, earliest: '2026-11-30T10:00:00' });
  });

  it('reads a portion without a quantity as the rest of the requested quantity', () => {
    expect(deliverable(item([portion('normal', null)])).units).toBe(10);
    expect(deliverable(item([portion('normal', null), portion('backorder', 4)])).units).toBe(6);
  });

  it('delivers nothing of an article replaced by a binding substitution or not asked', () => {
    const substitution = { reason: 'successor', defect_reason: null, pzn: '09990091' };
    expect(deliverable(item([portion('normal', 10)], { substitution } as never)).units).toBe(0);
    const proposal = { ...substitution, reason: 'proposal' };
    expect(deliverable(item([portion('normal', 10)], { substitution: proposal } as never)).units).toBe(10);
    const invalid = { reason: 'wrong_check_digit', expected_check_digit: '8', message: 'x' } as const;
    expect(deliverable(item([], { invalid_pzn: invalid } as never))).toEqual({ units: 0, earliest: null });
  });
});
