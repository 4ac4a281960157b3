import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCalendar } from './calendar.js';

/** The calendar's answers as Intl gives them for one instant, field by field: the reference. */
function viaIntl(timeZone: string, epochMs: number) {
  const instant = new Date(epochMs);
  // Swedish writes `2026-01-05 14:00:00`, ISO's order.
  const [date = '', time = ''] = instant.toLocaleString('sv-SE', { timeZone, hourCycle: 'h23' }).split(' ');
  const zone = instant.toLocaleString('en-US', { timeZone, timeZoneName: 'longOffset' }).split(' GMT')[1];
  const weekday = instant.toLocaleDateString('de-DE', { timeZone, weekday: 'short' }).slice(0, 2);
  const [hour = '', minute = ''] = time.split(':');
  return {
    at: { date, hour: Number(hour), minute: Number(minute), weekday },
    dateTime: `${date}T${time}${zone === '' || zone === undefined ? '+00:00' : zone}`,
  };
}

// Daylight saving time in both hemispheres, half and three-quarter hour offsets, a 30-minute DST shift.
const ZONES = [
  'Europe/Berlin',
  'UTC',
  'America/New_York',
  'America/St_Johns',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/Santiago',
];
const FROM = Date.UTC(1980, 0, 1);
const TO = Date.UTC(2100, 0, 1);

describe('the calendar', () => {
  it('gives the local date, time, weekday and offset Intl gives, for any instant from 1980 to 2100', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: FROM, max: TO }), (zone, epochMs) => {
        const calendar = createCalendar(zone);
        const expected = viaIntl(zone, epochMs);
        expect(calendar.at(epochMs)).toEqual(expected.at);
        expect(calendar.dateTime(epochMs)).toBe(expected.dateTime);
      }),
      { numRuns: 3_000 },
    );
  });

  it('agrees with Intl minute by minute around the changes of 2026, whichever instant it saw first', () => {
    const changes: [string, number][] = [
      ['Europe/Berlin', Date.UTC(2026, 2, 29, 1)],
      ['Europe/Berlin', Date.UTC(2026, 9, 25, 1)],
      ['America/New_York', Date.UTC(2026, 2, 8, 7)],
      ['America/St_Johns', Date.UTC(2026, 2, 8, 5, 30)],
      ['Australia/Lord_Howe', Date.UTC(2026, 3, 4, 15)],
      ['Pacific/Chatham', Date.UTC(2026, 3, 4, 14)],
    ];
    for (const [zone, change] of changes) {
      // One calendar reads the hours after the change first, the other the hours before it.
      for (const order of [1, -1]) {
        const calendar = createCalendar(zone);
        for (let minute = -90; minute <= 90; minute++) {
          const epochMs = change + order * minute * 60_000 - (order === -1 ? 1 : 0);
          expect(calendar.dateTime(epochMs)).toBe(viaIntl(zone, epochMs).dateTime);
        }
      }
    }
  });

  it('finds the instant of a local time that exists once, also on the days the clocks change', () => {
    const calendar = createCalendar('Europe/Berlin');
    expect(calendar.epochOf('2026-01-05', '14:00')).toBe(Date.UTC(2026, 0, 5, 13));
    expect(calendar.epochOf('2026-07-05', '14:00')).toBe(Date.UTC(2026, 6, 5, 12));
    expect(calendar.epochOf('2026-03-29', '03:30')).toBe(Date.UTC(2026, 2, 29, 1, 30));
    expect(calendar.epochOf('2026-10-25', '12:00')).toBe(Date.UTC(2026, 9, 25, 11));
    expect(calendar.dateTime(Date.UTC(2026, 0, 5, 13))).toBe('2026-01-05T14:00:00+01:00');
  });

  it('refuses an unknown time zone when made, not on first use', () => {
    expect(() => createCalendar('Europe/Atlantis')).toThrow(RangeError);
  });
});
