/**
 * MSV3 times are xs:dateTime values, usually with an offset (`2025-03-18T14:30:00+01:00`); the API shows
 * local date-times without a zone (`YYYY-MM-DDThh:mm:ss`, SPEC 2.3). "Local" is German wall-clock time:
 * every MSV3 wholesaler and pharmacy is in Germany. A value with an offset is converted to
 * Europe/Berlin (so `…T13:30:00Z` becomes `…T14:30:00` in winter); a value without one is taken as
 * already local. Fractions of a second are dropped.
 */

export const LOCAL_TIME_ZONE = 'Europe/Berlin';

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

/** Converts an xs:dateTime; a value that does not parse is cut to its first 19 characters. */
export function toLocalDateTime(value: string): LocalDateTime {
  const match = DATE_TIME.exec(value.trim());
  if (match === null) return { local: value.slice(0, 19), offset: null };
  const [, wallTime = '', , offset] = match;
  if (offset === undefined) return { local: wallTime, offset: null };
  const instant = new Date(`${wallTime}${offset}`);
  if (Number.isNaN(instant.getTime())) return { local: wallTime, offset };
  const parts = Object.fromEntries(berlin.formatToParts(instant).map((p) => [p.type, p.value]));
  return {
    local: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`,
    offset,
  };
}
