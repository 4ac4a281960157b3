import { describe, expect, it } from 'vitest';
import { germanWallTime } from '../../lib/local-date-time.js';
import type {
  ContractDataResponse,
  OrderWindow,
  SpecialDay,
} from '../../msv3/operations/vertragsdaten-abfragen.js';
import { cutoffOutlook } from './cutoff.js';

/** Monday 5 January 2026 (winter: Berlin is UTC+1). */
const at = (localTime: string, date = '2026-01-05') => Date.parse(`${date}T${localTime}+01:00`);

function contract(orderWindows: OrderWindow[], specialDays: SpecialDay[] = []): ContractDataResponse {
  const agreed = { maxFreeOrderLabels: 1, agreed: false };
  return {
    customerId: 'apotheke1',
    automaticRetrieval: false,
    orderWindows,
    orderTypes: {
      NORMAL: { maxFreeOrderLabels: 5 },
      STAPEL: agreed,
      SONDER: agreed,
      VERSAND: { ...agreed, completeContainersOnly: false },
    },
    substitutionAgreed: true,
    specificAvailabilityAgreed: true,
    bulkAvailabilityAgreed: true,
    takeBackOffersAgreed: true,
    specialDays,
  };
}

const WEEK = contract([
  { day: 'Mo', cutoff: '11:30:00', mainOrderTime: { day: 'Mo', time: '11:00:00' } },
  { day: 'Mo', cutoff: '17:00:00', mainOrderTime: { day: 'Mo', time: '16:30:00' } },
  { day: 'Di', cutoff: '11:30:00' },
]);

describe('cutoffOutlook', () => {
  it('reads local time in Germany', () => {
    expect(germanWallTime(Date.UTC(2026, 0, 5, 9, 0, 0))).toBe('2026-01-05T10:00:00');
    expect(germanWallTime(Date.UTC(2026, 6, 6, 9, 0, 0))).toBe('2026-07-06T11:00:00');
  });

  it('finds the next window of today with its main order time', () => {
    expect(cutoffOutlook(WEEK, at('10:00:00'))).toEqual({
      next: { at: '2026-01-05T11:30:00', special_day: false, main_order_time: '11:00' },
      no_window_today: false,
      closed_for_today: false,
    });
    expect(cutoffOutlook(WEEK, at('12:00:00')).next?.at).toBe('2026-01-05T17:00:00');
  });

  it('keeps a window open until 59 seconds after its cut-off', () => {
    expect(cutoffOutlook(WEEK, at('11:30:58')).next?.at).toBe('2026-01-05T11:30:00');
    expect(cutoffOutlook(WEEK, at('11:30:59')).next?.at).toBe('2026-01-05T17:00:00');
  });

  it('moves to a later day once today is closed', () => {
    expect(cutoffOutlook(WEEK, at('18:00:00'))).toMatchObject({
      next: { at: '2026-01-06T11:30:00', main_order_time: null },
      closed_for_today: true,
    });
    expect(cutoffOutlook(WEEK, at('12:00:00', '2026-01-06')).next?.at).toBe('2026-01-12T11:30:00');
  });

  it('lets a special day replace the weekly windows', () => {
    const holiday = contract(WEEK.orderWindows, [
      { date: '2026-01-05', windows: [] },
      { date: '2026-01-06+01:00', windows: [{ cutoff: '09:00:00', mainOrderTime: '08:30:00' }] },
    ]);
    expect(cutoffOutlook(holiday, at('10:00:00'))).toEqual({
      next: { at: '2026-01-06T09:00:00', special_day: true, main_order_time: '08:30' },
      no_window_today: true,
      closed_for_today: false,
    });
  });

  it('reads 24:00 as midnight at the end of the day', () => {
    const late = contract([{ day: 'Mo', cutoff: '24:00:00' }]);
    expect(cutoffOutlook(late, at('23:00:00'))).toMatchObject({
      next: { at: '2026-01-06T00:00:00' },
      closed_for_today: false,
    });
  });

  it('reports no cut-off when the contract has no window in two weeks', () => {
    const never = contract(
      [{ day: 'Mo', cutoff: '11:30:00' }],
      [
        { date: '2026-01-12', windows: [] },
        { date: '2026-01-19', windows: [] },
      ],
    );
    expect(cutoffOutlook(never, at('12:00:00')).next).toBeNull();
  });
});
