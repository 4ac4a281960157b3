import type { VertragsdatenTag } from '../msv3/operations/vertragsdaten-abfragen.js';

/**
 * Wall-clock time in the wholesaler's time zone (Europe/Berlin by default): tours, cut-offs and night
 * hours are local times, and MSV3 date-times are written with the local offset (`2026-01-05T14:00:00+01:00`).
 * Built per server on `Intl` (full ICU ships with Node), so no time-zone library is needed.
 */

interface LocalTime {
  /** `YYYY-MM-DD` (xs:date). */
  date: string;
  hour: number;
  minute: number;
  weekday: VertragsdatenTag;
}

export interface Calendar {
  readonly timeZone: string;
  at(epochMs: number): LocalTime;
  /** The instant of a local date and `HH:MM` time. */
  epochOf(date: string, hhmm: string): number;
  /** xs:dateTime with the local offset, whole seconds. */
  dateTime(epochMs: number): string;
  /** `YYYY-MM-DD` plus `days` (calendar arithmetic, no time zone involved). */
  addDays(date: string, days: number): string;
}

const WEEKDAYS: Record<string, VertragsdatenTag> = {
  Mon: 'Mo',
  Tue: 'Di',
  Wed: 'Mi',
  Thu: 'Do',
  Fri: 'Fr',
  Sat: 'Sa',
  Sun: 'So',
};

export function createCalendar(timeZone: string): Calendar {
  // Throws a RangeError for an unknown zone, at start-up rather than on the first request.
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    weekday: 'short',
    timeZoneName: 'longOffset',
  });

  function parts(epochMs: number) {
    const p: Record<string, string> = {};
    for (const part of format.formatToParts(new Date(epochMs))) p[part.type] = part.value;
    // `longOffset` yields `GMT+01:00`, or plain `GMT` for a zero offset.
    const offset = p.timeZoneName === 'GMT' ? '+00:00' : (p.timeZoneName ?? 'GMT+00:00').slice(3);
    return {
      date: `${p.year}-${p.month}-${p.day}`,
      hour: Number(p.hour),
      minute: Number(p.minute),
      second: Number(p.second),
      weekday: WEEKDAYS[p.weekday ?? ''] ?? 'Mo',
      offset,
    };
  }

  function offsetMinutes(epochMs: number): number {
    const offset = parts(epochMs).offset;
    const sign = offset.startsWith('-') ? -1 : 1;
    return sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
  }

  return {
    timeZone,
    at(epochMs) {
      const { date, hour, minute, weekday } = parts(epochMs);
      return { date, hour, minute, weekday };
    },
    epochOf(date, hhmm) {
      const [year, month, day] = date.split('-').map(Number) as [number, number, number];
      const [hour, minute] = hhmm.split(':').map(Number) as [number, number];
      const asUtc = Date.UTC(year, month - 1, day, hour, minute);
      // The offset at the guessed instant can differ from the one at the answer around a DST switch.
      const first = asUtc - offsetMinutes(asUtc) * 60_000;
      return asUtc - offsetMinutes(first) * 60_000;
    },
    dateTime(epochMs) {
      const p = parts(epochMs);
      const hh = String(p.hour).padStart(2, '0');
      const mm = String(p.minute).padStart(2, '0');
      const ss = String(p.second).padStart(2, '0');
      return `${p.date}T${hh}:${mm}:${ss}${p.offset}`;
    },
    addDays(date, days) {
      const [year, month, day] = date.split('-').map(Number) as [number, number, number];
      return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
    },
  };
}
