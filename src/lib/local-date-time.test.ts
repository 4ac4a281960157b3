import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { moduleAsDataUrl } from '../../test/module-url.js';
import { toLocalDateTime, toLocalDateTimeViaIntl } from './local-date-time.js';

describe('toLocalDateTime', () => {
  it('keeps German wall-clock time and the offset the wholesaler wrote', () => {
    expect(toLocalDateTime('2025-03-18T14:30:00+01:00')).toEqual({
      local: '2025-03-18T14:30:00',
      offset: '+01:00',
    });
    expect(toLocalDateTime('2025-07-01T09:15:00+02:00')).toEqual({
      local: '2025-07-01T09:15:00',
      offset: '+02:00',
    });
  });

  it('converts other offsets to Europe/Berlin, across midnight and daylight saving time', () => {
    expect(toLocalDateTime('2025-03-18T13:30:00Z')).toEqual({ local: '2025-03-18T14:30:00', offset: 'Z' });
    expect(toLocalDateTime('2025-07-01T23:30:00Z').local).toBe('2025-07-02T01:30:00');
    expect(toLocalDateTime('2025-03-18T14:30:00+02:00').local).toBe('2025-03-18T13:30:00');
  });

  it('takes a time without offset as local and drops fractions of a second', () => {
    expect(toLocalDateTime('2025-03-18T14:30:00')).toEqual({ local: '2025-03-18T14:30:00', offset: null });
    expect(toLocalDateTime('2025-03-18T14:30:00.987+01:00').local).toBe('2025-03-18T14:30:00');
  });
});

describe('toLocalDateTime fast path', () => {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');

  it('agrees with the Intl conversion for any date-time, offset and field range', () => {
    const dateTime = fc
      .record({
        year: fc.integer({ min: 1960, max: 2230 }),
        month: fc.integer({ min: 0, max: 13 }),
        day: fc.integer({ min: 0, max: 32 }),
        hour: fc.integer({ min: 0, max: 24 }),
        minute: fc.integer({ min: 0, max: 60 }),
        second: fc.integer({ min: 0, max: 60 }),
        fraction: fc.constantFrom('', '.5', '.987'),
        offset: fc.oneof(
          fc.constant('Z'),
          fc.constant(''),
          fc
            .record({
              sign: fc.constantFrom('+', '-'),
              hours: fc.integer({ min: 0, max: 24 }),
              minutes: fc.constantFrom(0, 30, 45, 59, 60),
            })
            .map((o) => `${o.sign}${pad(o.hours)}:${pad(o.minutes)}`),
        ),
      })
      .map(
        (t) =>
          `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}${t.fraction}${t.offset}`,
      );
    fc.assert(
      fc.property(dateTime, (value) => {
        expect(toLocalDateTime(value)).toEqual(toLocalDateTimeViaIntl(value));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with Intl in every hour around the daylight saving changes of 1980 to 2199 (March, September, October)', () => {
    for (let year = 1980; year <= 2199; year++) {
      for (const month of [2, 8, 9]) {
        const lastSunday = 31 - new Date(Date.UTC(year, month, 31)).getUTCDay();
        const change = Date.UTC(year, month, lastSunday, 1);
        for (let h = -3; h <= 3; h++) {
          for (const minute of [0, 59]) {
            const value = `${new Date(change + h * 3_600_000 + minute * 60_000).toISOString().slice(0, 19)}Z`;
            expect(toLocalDateTime(value), value).toEqual(toLocalDateTimeViaIntl(value));
          }
        }
      }
    }
  });

  it('agrees with Intl on every day of 1980 to 2199 (the day count of the fast path)', () => {
    const first = Date.UTC(1980, 0, 1, 12);
    const last = Date.UTC(2199, 11, 31, 12);
    for (let at = first; at <= last; at += 86_400_000) {
      const wall = new Date(at).toISOString().slice(0, 19);
      for (const value of [`${wall}Z`, `${wall}+01:00`, `${wall}-03:30`]) {
        const fast = toLocalDateTime(value);
        const general = toLocalDateTimeViaIntl(value);
        if (fast.local !== general.local || fast.offset !== general.offset)
          expect(fast, value).toEqual(general);
      }
    }
  });

  it('agrees with Intl when any one character of a usual value is changed', () => {
    const alphabet = fc.constantFrom(...'0123456789+-:TZtz .x/\u0660'.split(''));
    const base = fc.constantFrom(
      '2025-03-18T14:30:00+01:00',
      '2025-07-01T23:30:00Z',
      '2024-02-29T09:05:59-11:45',
    );
    fc.assert(
      fc.property(base, fc.nat(), alphabet, (value, position, replacement) => {
        const at = position % value.length;
        const changed = value.slice(0, at) + replacement + value.slice(at + 1);
        expect(toLocalDateTime(changed)).toEqual(toLocalDateTimeViaIntl(changed));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps the odd inputs of the general path', () => {
    expect(toLocalDateTime('2025-02-30T10:00:00+01:00').local).toBe('2025-03-02T10:00:00');
    expect(toLocalDateTime('2025-03-18T24:00:00+01:00').local).toBe('2025-03-19T00:00:00');
    expect(toLocalDateTime('2025-03-18T10:00:60+01:00')).toEqual({
      local: '2025-03-18T10:00:60',
      offset: '+01:00',
    });
    expect(toLocalDateTime('12025-03-18T10:00:00Z').offset).toBe('Z');
  });
});

describe('toLocalDateTime remembering conversions', () => {
  it('agrees with Intl when values repeat, come back and share a slot', () => {
    // A small pool, so values repeat; those differing only in month, year, seconds or offset share a slot.
    const pool = fc.constantFrom(
      '2025-03-18T14:30:00+01:00',
      '2025-04-18T14:30:00+01:00',
      '2026-03-18T14:30:00+01:00',
      '2025-03-18T14:30:59+01:00',
      '2025-03-18T14:30:00+02:00',
      '2025-03-18T14:30:00Z',
      '2025-03-18T14:35:00+01:00',
      '2025-03-28T14:30:00+01:00',
      '2025-03-18T04:30:00+01:00',
      '2025-03-18T14:30:00',
      '2025-03-18',
      '2025-10-26T00:30:00Z',
      '2025-10-26T01:30:00Z',
    );
    fc.assert(
      fc.property(fc.array(pool, { minLength: 1, maxLength: 40 }), (values) => {
        for (const value of values)
          expect(toLocalDateTime(value), value).toEqual(toLocalDateTimeViaIntl(value));
      }),
      { numRuns: 500 },
    );
  });

  /**
   * In a fresh process: 100 documents of 1 MB, from each a time read as a slice of it (as the decoder
   * reads them) and converted, each to a slot of its own; the heap after a full collection, the documents
   * dropped, in MB. `keepSlices` keeps the slices themselves, the control: a slice keeps its document.
   */
  function heapGrowthMb(keepSlices: boolean): number {
    const moduleUrl = moduleAsDataUrl(new URL('./local-date-time.ts', import.meta.url));
    const script = `
      const { toLocalDateTime } = await import(${JSON.stringify(moduleUrl)});
      globalThis.gc();
      const before = process.memoryUsage().heapUsed;
      const kept = [];
      for (let day = 0; day < 10; day++) {
        for (let hour = 0; hour < 10; hour++) {
          const time = '2025-03-1' + day + 'T0' + hour + ':30:00+01:00';
          const doc = ('<x>' + 'y'.repeat(1 << 20) + time + '</x>').slice(0);
          const value = doc.slice(3 + (1 << 20), 3 + (1 << 20) + time.length);
          if (toLocalDateTime(value).local !== time.slice(0, 19)) throw new Error('wrong: ' + value);
          if (${keepSlices}) kept.push(value);
        }
      }
      globalThis.gc();
      const mb = (process.memoryUsage().heapUsed - before) / 1048576;
      console.log(JSON.stringify({ mb, kept: kept.length }));`;
    const output = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    return (JSON.parse(output) as { mb: number }).mb;
  }

  it('keeps no slice of a wholesaler document alive', () => {
    expect(heapGrowthMb(false)).toBeLessThan(10);
  });

  it('would keep documents alive with slices remembered (the control: a slice holds its document)', () => {
    expect(heapGrowthMb(true)).toBeGreaterThan(90);
  });
});
