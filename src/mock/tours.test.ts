import { describe, expect, it } from 'vitest';
import { createCalendar } from './calendar.js';
import { toursOn, upcomingDepartures, upcomingSpecialDays } from './tours.js';

const berlin = createCalendar('Europe/Berlin');

describe('the Berlin calendar', () => {
  it('writes date-times with the local offset, winter and summer', () => {
    expect(berlin.dateTime(Date.UTC(2026, 0, 5, 9, 0, 0))).toBe('2026-01-05T10:00:00+01:00');
    expect(berlin.dateTime(Date.UTC(2026, 6, 1, 9, 0, 0))).toBe('2026-07-01T11:00:00+02:00');
  });

  it('finds the instant of a local time on both sides of the DST switch', () => {
    expect(berlin.epochOf('2026-03-28', '10:30')).toBe(Date.UTC(2026, 2, 28, 9, 30));
    expect(berlin.epochOf('2026-03-30', '10:30')).toBe(Date.UTC(2026, 2, 30, 8, 30));
  });

  it('knows weekdays and local dates around midnight', () => {
    expect(berlin.at(Date.UTC(2026, 0, 4, 23, 30))).toEqual({
      date: '2026-01-05',
      hour: 0,
      minute: 30,
      weekday: 'Mo',
    });
    expect(berlin.addDays('2026-02-28', 1)).toBe('2026-03-01');
  });

  it('works in UTC too', () => {
    expect(createCalendar('UTC').dateTime(Date.UTC(2026, 0, 5, 9, 0, 0))).toBe('2026-01-05T09:00:00+00:00');
  });
});

describe('tours', () => {
  const at = (date: string, time: string) => berlin.epochOf(date, time);

  it('picks the next tour whose cut-off has not passed (Monday 10:00 → Mittagstour)', () => {
    const [next, second, third] = upcomingDepartures(at('2026-01-05', '10:00'), berlin, 3);
    expect([next?.tour.name, second?.tour.name, third?.tour.name]).toEqual([
      'Mittagstour',
      'Abendtour',
      'Morgentour',
    ]);
    expect(next?.date).toBe('2026-01-05');
    expect(third?.date).toBe('2026-01-06');
    expect(berlin.dateTime(next!.arrivalAt)).toBe('2026-01-05T14:00:00+01:00');
  });

  it('still takes an order for a window up to 59 seconds after its cut-off', () => {
    expect(upcomingDepartures(at('2026-01-05', '11:30') + 58_000, berlin, 1)[0]?.tour.id).toBe('T2');
    expect(upcomingDepartures(at('2026-01-05', '11:30') + 60_000, berlin, 1)[0]?.tour.id).toBe('T3');
  });

  it('delivers once on Saturday and never on Sunday', () => {
    const after = upcomingDepartures(at('2026-01-09', '17:00'), berlin, 2);
    expect(after.map((d) => `${d.date} ${d.tour.id}`)).toEqual(['2026-01-10 T1', '2026-01-12 T1']);
  });

  it('follows special days: only the morning tour on 24 December, none on 25/26 December', () => {
    expect(toursOn('2026-12-24', berlin).map((t) => t.id)).toEqual(['T1']);
    expect(toursOn('2026-12-25', berlin)).toEqual([]);
    const after = upcomingDepartures(at('2026-12-24', '09:00'), berlin, 1);
    expect(after[0]?.date).toBe('2026-12-28');
  });

  it('lists the special days of the coming year', () => {
    const days = upcomingSpecialDays(at('2026-01-05', '10:00'), berlin);
    expect(days.map((d) => d.date)).toEqual([
      '2026-12-24',
      '2026-12-25',
      '2026-12-26',
      '2026-12-31',
      '2027-01-01',
    ]);
  });
});
