import { germanWallTime } from '../../lib/local-date-time.js';
import type { ContractDataResponse, VertragsdatenTag } from '../../msv3/operations/vertragsdaten-abfragen.js';

/**
 * The next order cut-off from the contract data (docs/msv3.md "Order windows and cut-offs"): weekly
 * `Bestellfenster` (day + `Endezeit`), replaced on a v2 `Sondertag` by that date's windows (none: no cut-off,
 * no delivery that day). An order still counts for a window when its transmission starts before cut-off
 * + 59 s. Times are German local wall-clock times, as the contract gives them.
 */

export interface NextCutoff {
  /** Local date-time `YYYY-MM-DDThh:mm:ss` of the cut-off. */
  at: string;
  /** True when the date is a special day (`Sondertag`) with its own windows. */
  special_day: boolean;
  /** The recommended time for the main order of that window (`Hauptbestellzeit`), `hh:mm`, or null. */
  main_order_time: string | null;
}

export interface CutoffOutlook {
  next: NextCutoff | null;
  /** Today is a special day without any window: nothing is delivered today. */
  no_window_today: boolean;
  /** Today has windows, but the last one has closed: the order goes into a later day's window. */
  closed_for_today: boolean;
}

const WEEKDAYS: readonly VertragsdatenTag[] = ['So', 'Mo', 'Di', 'Mi', 'Do', 'Fr', 'Sa'];
/** How many days ahead to look; a contract with no window in two weeks has none at all. */
const HORIZON_DAYS = 14;

function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

function weekdayOf(date: string): VertragsdatenTag {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return WEEKDAYS[new Date(Date.UTC(y, m - 1, d)).getUTCDay()]!;
}

interface Window {
  cutoff: string;
  mainOrderTime: string | null;
}

function windowsOn(contract: ContractDataResponse, date: string): { windows: Window[]; special: boolean } {
  // xs:date may carry a zone suffix (`2026-01-06+01:00`); the calendar date is the first ten characters.
  const special = contract.specialDays.find((d) => d.date.slice(0, 10) === date);
  if (special !== undefined) {
    return {
      special: true,
      windows: special.windows.map((w) => ({ cutoff: w.cutoff, mainOrderTime: w.mainOrderTime })),
    };
  }
  const day = weekdayOf(date);
  return {
    special: false,
    windows: contract.orderWindows
      .filter((w) => w.day === day)
      .map((w) => ({ cutoff: w.cutoff, mainOrderTime: w.mainOrderTime?.time ?? null })),
  };
}

/** `24:00:00` is the end of the day: written as the next day's midnight. */
function cutoffDateTime(date: string, cutoff: string): string {
  return cutoff === '24:00:00' ? `${addDays(date, 1)}T00:00:00` : `${date}T${cutoff}`;
}

/** The grace second mark: `hh:mm:59` of the cut-off minute. */
function graceEnd(date: string, cutoff: string): string {
  return `${cutoffDateTime(date, cutoff).slice(0, 17)}59`;
}

export function cutoffOutlook(contract: ContractDataResponse, nowEpochMs: number): CutoffOutlook {
  const now = germanWallTime(nowEpochMs);
  const today = now.slice(0, 10);
  const todays = windowsOn(contract, today);
  let next: NextCutoff | null = null;
  let nextOffset = -1;
  for (let offset = 0; offset <= HORIZON_DAYS && next === null; offset++) {
    const date = addDays(today, offset);
    const { windows, special } = offset === 0 ? todays : windowsOn(contract, date);
    const open = windows
      .filter((w) => graceEnd(date, w.cutoff) > now)
      .sort((a, b) => a.cutoff.localeCompare(b.cutoff))[0];
    if (open !== undefined) {
      next = {
        at: cutoffDateTime(date, open.cutoff),
        special_day: special,
        main_order_time: open.mainOrderTime?.slice(0, 5) ?? null,
      };
      nextOffset = offset;
    }
  }
  return {
    next,
    no_window_today: todays.special && todays.windows.length === 0,
    closed_for_today: todays.windows.length > 0 && nextOffset !== 0,
  };
}
