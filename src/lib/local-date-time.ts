/**
 * MSV3 times are xs:dateTime values, usually with an offset (`2025-03-18T14:30:00+01:00`); the API shows
 * local date-times without a zone (`YYYY-MM-DDThh:mm:ss`, docs/wholesalers.md "Availability"). "Local" is
 * German wall-clock time: every MSV3 wholesaler and pharmacy is in Germany. A value with an offset is
 * converted to Europe/Berlin (so `…T13:30:00Z` becomes `…T14:30:00` in winter); a value without one is taken
 * as already local. Fractions of a second are dropped.
 */

const LOCAL_TIME_ZONE = 'Europe/Berlin';

const DATE_TIME = /^(-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

const berlin = new Intl.DateTimeFormat('en-CA', {
  timeZone: LOCAL_TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

export interface LocalDateTime {
  /** `YYYY-MM-DDThh:mm:ss`, German wall-clock time. */
  local: string;
  /** The offset as the wholesaler wrote it (`+01:00`, `Z`), or null when it wrote none. */
  offset: string | null;
}

/**
 * Converts an xs:dateTime; a value that does not parse is cut to its first 19 characters.
 *
 * Hot path (every delivery part of every answer): ordinary values from 1980 to 2199 are converted with
 * arithmetic and the Europe/Berlin offset of their UTC hour, looked up once per hour through Intl
 * (since 1980 German clocks change only at full UTC hours, so one hour has one offset). Anything else
 * (other years, out-of-range fields that Date would roll over) takes the general Intl path;
 * `toLocalDateTimeViaIntl`, and a property test keeps both equal.
 */
export function toLocalDateTime(value: string): Readonly<LocalDateTime> {
  const slot = slotOf(value);
  const known = remembered[slot];
  if (known !== undefined && known.value === value) return known.converted;
  const own = ownCopy(value);
  const plain = plainWithOffset(own);
  if (plain !== undefined) {
    remembered[slot] = { value: own, converted: plain };
    return plain;
  }
  const match = DATE_TIME.exec(value.trim());
  if (match === null) return { local: value.slice(0, 19), offset: null };
  const [, wallTime = '', , offset] = match;
  if (offset === undefined) return { local: wallTime, offset: null };
  const instant = fastInstant(wallTime, offset);
  if (instant === undefined) return viaIntl(wallTime, offset);
  return { local: new Date(instant + berlinOffsetMs(instant)).toISOString().slice(0, 19), offset };
}

/**
 * Conversions of the usual shape, remembered: an answer's delivery times repeat (one tour, one time for
 * many articles, the same times for every pharmacy a wholesaler serves), and comparing a value with the
 * one in its slot costs a third of converting it (docs/performance.md "Delivery times remembered"). A slot
 * holds a copy of the value and what was converted from the copy, never a slice of the wholesaler's
 * document, which a remembered slice would keep alive.
 */
interface Remembered {
  value: string;
  converted: Readonly<LocalDateTime>;
}
const SLOTS = 2048;
const remembered: (Remembered | undefined)[] = new Array(SLOTS).fill(undefined);

/**
 * A slot from the digits where one wholesaler's times differ: the day's last, the hour's two and the
 * minute's first (`…-18T08:30…`); values differing there never share a slot.
 */
function slotOf(value: string): number {
  if (value.length < 15) return 0;
  const day = value.charCodeAt(9) - 48;
  const hours = (value.charCodeAt(11) - 48) * 10 + value.charCodeAt(12) - 48;
  const tensOfMinutes = value.charCodeAt(14) - 48;
  return ((day * 24 + hours) * 6 + tensOfMinutes) & (SLOTS - 1);
}

/** `text` as a flat string of its own, not a slice of a larger one (JSON keeps every character as it is). */
function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/**
 * The usual shape, `YYYY-MM-DDThh:mm:ss+hh:mm` or `…Z` with ordinary fields (the checks of `fastInstant`),
 * read in one pass without regex, substrings or Date: when the offset written is Berlin's own at that
 * instant, the local time is the written wall time as it stands.
 */
function plainWithOffset(value: string): LocalDateTime | undefined {
  const length = value.length;
  if (length !== 25 && length !== 20) return undefined;
  if (
    value.charCodeAt(4) !== 45 || // -
    value.charCodeAt(7) !== 45 ||
    value.charCodeAt(10) !== 84 || // T
    value.charCodeAt(13) !== 58 || // :
    value.charCodeAt(16) !== 58
  )
    return undefined;
  // The digits read in place, without a helper per field: inside the gateway's mapping V8 had no
  // inlining budget left for one, and a call per field cost more than the field (docs/performance.md).
  const y0 = value.charCodeAt(0) - 48;
  const y1 = value.charCodeAt(1) - 48;
  const y2 = value.charCodeAt(2) - 48;
  const y3 = value.charCodeAt(3) - 48;
  const mo0 = value.charCodeAt(5) - 48;
  const mo1 = value.charCodeAt(6) - 48;
  const d0 = value.charCodeAt(8) - 48;
  const d1 = value.charCodeAt(9) - 48;
  const h0 = value.charCodeAt(11) - 48;
  const h1 = value.charCodeAt(12) - 48;
  const mi0 = value.charCodeAt(14) - 48;
  const mi1 = value.charCodeAt(15) - 48;
  const s0 = value.charCodeAt(17) - 48;
  const s1 = value.charCodeAt(18) - 48;
  // Negative when a character is no digit: its value below 0, or above 9 so that 9 minus it is below 0.
  // biome-ignore format: the fourteen digits and their complements, side by side
  const digits = y0 | y1 | y2 | y3 | mo0 | mo1 | d0 | d1 | h0 | h1 | mi0 | mi1 | s0 | s1 |
    (9 - y0) | (9 - y1) | (9 - y2) | (9 - y3) | (9 - mo0) | (9 - mo1) | (9 - d0) | (9 - d1) |
    (9 - h0) | (9 - h1) | (9 - mi0) | (9 - mi1) | (9 - s0) | (9 - s1);
  if (digits < 0) return undefined;
  const year = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const month = mo0 * 10 + mo1;
  const day = d0 * 10 + d1;
  const hour = h0 * 10 + h1;
  const minute = mi0 * 10 + mi1;
  const second = s0 * 10 + s1;
  if (year < FIRST_FAST_YEAR || year > LAST_FAST_YEAR || month < 1 || month > 12 || day < 1) return undefined;
  if (day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  let written = 0;
  if (length === 25) {
    const sign = value.charCodeAt(19);
    if ((sign !== 43 && sign !== 45) || value.charCodeAt(22) !== 58) return undefined;
    const oh0 = value.charCodeAt(20) - 48;
    const oh1 = value.charCodeAt(21) - 48;
    const om0 = value.charCodeAt(23) - 48;
    const om1 = value.charCodeAt(24) - 48;
    if ((oh0 | oh1 | om0 | om1 | (9 - oh0) | (9 - oh1) | (9 - om0) | (9 - om1)) < 0) return undefined;
    const offsetHours = oh0 * 10 + oh1;
    const offsetMinutes = om0 * 10 + om1;
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    written = (offsetHours * 60 + offsetMinutes) * MINUTE_MS;
    if (sign === 45) written = -written;
  } else if (value.charCodeAt(19) !== 90) return undefined; // Z
  const instant =
    daysSinceEpoch(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 - written;
  const berlinOffset = berlinOffsetMs(instant);
  const local =
    berlinOffset === written
      ? value.slice(0, 19)
      : new Date(instant + berlinOffset).toISOString().slice(0, 19);
  return { local, offset: length === 25 ? writtenOffset(value, written) : 'Z' };
}

/** The offset as written (`+01:00`); Germany's two offsets as constants, so most values copy nothing. */
function writtenOffset(value: string, writtenMs: number): string {
  if (writtenMs === HOUR_MS) return '+01:00';
  if (writtenMs === 2 * HOUR_MS) return '+02:00';
  return value.slice(19);
}

const DAY_MS = 86_400_000;

/** Days from 1970-01-01 to a proleptic Gregorian date (what Date.UTC counts), for years ≥ 1. */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The general conversion (Date parsing, Intl formatting), for values outside the fast path and tests. */
export function toLocalDateTimeViaIntl(value: string): LocalDateTime {
  const match = DATE_TIME.exec(value.trim());
  if (match === null) return { local: value.slice(0, 19), offset: null };
  const [, wallTime = '', , offset] = match;
  if (offset === undefined) return { local: wallTime, offset: null };
  return viaIntl(wallTime, offset);
}

function viaIntl(wallTime: string, offset: string): LocalDateTime {
  const instant = new Date(`${wallTime}${offset}`);
  if (Number.isNaN(instant.getTime())) return { local: wallTime, offset };
  return { local: germanWallTime(instant.getTime()), offset };
}

/** `YYYY-MM-DDThh:mm:ss` of an instant in German local time. */
export function germanWallTime(epochMs: number): string {
  const p = Object.fromEntries(berlin.formatToParts(new Date(epochMs)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const FIRST_FAST_YEAR = 1980;
const LAST_FAST_YEAR = 2199;

/** Epoch ms of `YYYY-MM-DDThh:mm:ss` + offset when every field is ordinary; undefined otherwise. */
function fastInstant(wallTime: string, offset: string): number | undefined {
  if (wallTime.length !== 19) return undefined; // a sign or a five-digit year
  const year = digits(wallTime, 0, 4);
  const month = digits(wallTime, 5, 7);
  const day = digits(wallTime, 8, 10);
  const hour = digits(wallTime, 11, 13);
  const minute = digits(wallTime, 14, 16);
  const second = digits(wallTime, 17, 19);
  if (year < FIRST_FAST_YEAR || year > LAST_FAST_YEAR || month < 1 || month > 12 || day < 1) return undefined;
  if (day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMs = 0;
  if (offset !== 'Z') {
    const offsetHours = digits(offset, 1, 3);
    const offsetMinutes = digits(offset, 4, 6);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offsetMs = (offsetHours * 60 + offsetMinutes) * MINUTE_MS * (offset[0] === '-' ? -1 : 1);
  }
  return Date.UTC(year, month - 1, day, hour, minute, second) - offsetMs;
}

function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + (text.charCodeAt(i) - 48);
  return n;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return DAYS_IN_MONTH[month - 1]!;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

/** Europe/Berlin offset (ms) per UTC hour; bounded, cleared when full. */
const offsetByHour = new Map<number, number>();
const MAX_CACHED_HOURS = 50_000;

function berlinOffsetMs(instant: number): number {
  const hour = Math.floor(instant / HOUR_MS);
  let offset = offsetByHour.get(hour);
  if (offset === undefined) {
    const start = hour * HOUR_MS;
    const p = Object.fromEntries(berlin.formatToParts(new Date(start)).map((x) => [x.type, Number(x.value)]));
    offset = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) - start;
    if (offsetByHour.size >= MAX_CACHED_HOURS) offsetByHour.clear();
    offsetByHour.set(hour, offset);
  }
  return offset;
}
