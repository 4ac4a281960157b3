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

/** `VertragsdatenTag` by `Date.getUTCDay()` (0 = Sunday). */
const WEEKDAYS: readonly VertragsdatenTag[] = ['So', 'Mo', 'Di', 'Mi', 'Do', 'Fr', 'Sa'];

const QUARTER_HOUR_MS = 900_000;
/** Offsets kept per calendar (some 100 days of quarter hours); then the cache starts again. */
const KEPT_OFFSETS = 10_000;

export function createCalendar(timeZone: string): Calendar {
  // Throws a RangeError for an unknown zone, at start-up rather than on the first request.
  const offsetFormat = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
  const offsets = new Map<number, number>();

  /**
   * The zone's offset from UTC in minutes. Intl is asked once per quarter hour (UTC) and the answer
   * kept: since 1980 every zone has changed its offset only at quarter hours of UTC (its changes come
   * at full or half local hours, and offsets are whole quarter hours), and the sandbox asks about the
   * same few days again and again, where Intl takes some microseconds per question.
   */
  function offsetMinutes(epochMs: number): number {
    const quarter = Math.floor(epochMs / QUARTER_HOUR_MS);
    let offset = offsets.get(quarter);
    if (offset === undefined) {
      const name = offsetFormat
        .formatToParts(new Date(quarter * QUARTER_HOUR_MS))
        .find((part) => part.type === 'timeZoneName')?.value;
      // `longOffset` writes `GMT+01:00`, or plain `GMT` for a zero offset.
      const match = /^GMT([+-])(\d\d):(\d\d)/.exec(name ?? '');
      offset = match === null ? 0 : (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
      if (offsets.size >= KEPT_OFFSETS) offsets.clear();
      offsets.set(quarter, offset);
    }
    return offset;
  }

  /** The local wall time: the instant moved by the zone's offset, read as if it were UTC. */
  function parts(epochMs: number) {
    const offset = offsetMinutes(epochMs);
    const local = new Date(epochMs + offset * 60_000);
    const sign = offset < 0 ? '-' : '+';
    const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
    const mm = String(Math.abs(offset) % 60).padStart(2, '0');
    return {
      date: local.toISOString().slice(0, 10),
      hour: local.getUTCHours(),
      minute: local.getUTCMinutes(),
      second: local.getUTCSeconds(),
      weekday: WEEKDAYS[local.getUTCDay()]!,
      offset: `${sign}${hh}:${mm}`,
    };
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
