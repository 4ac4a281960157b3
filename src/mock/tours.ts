import type { VertragsdatenTag } from '../msv3/operations/vertragsdaten-abfragen.js';
import type { Calendar } from './calendar.js';

/**
 * The simulated delivery schedule: three tours on weekdays, one on Saturday, none on Sunday, with
 * exceptions on special days. Each tour has an order cut-off (the contract's `Endezeit`), a recommended
 * main order time (`Hauptbestellzeit`) and an arrival time at the pharmacy (`Lieferzeitpunkt`).
 */

export interface Tour {
  /** `TourId`, a printable id. */
  id: string;
  /** `Tour`, free text. */
  name: string;
  /** Local `HH:MM`. */
  cutoff: string;
  mainOrderTime: string;
  arrival: string;
}

const TOURS: readonly Tour[] = [
  { id: 'T1', name: 'Morgentour', cutoff: '08:30', mainOrderTime: '08:00', arrival: '10:30' },
  { id: 'T2', name: 'Mittagstour', cutoff: '11:30', mainOrderTime: '11:00', arrival: '14:00' },
  { id: 'T3', name: 'Abendtour', cutoff: '16:00', mainOrderTime: '15:30', arrival: '18:30' },
];

const MORNING = TOURS[0]!;

const WEEKLY: Record<VertragsdatenTag, readonly Tour[]> = {
  Mo: TOURS,
  Di: TOURS,
  Mi: TOURS,
  Do: TOURS,
  Fr: TOURS,
  Sa: [MORNING],
  So: [],
};

/** Special days (v2 `Sondertag`) by `MM-DD`: the tours that run that day (none = no delivery). */
const SPECIAL_DAYS: Record<string, readonly Tour[]> = {
  '12-24': [MORNING],
  '12-25': [],
  '12-26': [],
  '12-31': [MORNING],
  '01-01': [],
};

export function weeklyTours(day: VertragsdatenTag): readonly Tour[] {
  return WEEKLY[day];
}

/** The tours that run on a local date, special days included. */
export function toursOn(date: string, calendar: Calendar): readonly Tour[] {
  return SPECIAL_DAYS[date.slice(5)] ?? WEEKLY[calendar.at(calendar.epochOf(date, '12:00')).weekday];
}

export interface Departure {
  tour: Tour;
  /** Local date of the delivery (the delivery note's `Belegdatum`). */
  date: string;
  cutoffAt: number;
  arrivalAt: number;
}

/**
 * An order still counts for a window if its transmission starts before cut-off + 59 s (docs/msv3.md
 * "Order windows and cut-offs").
 */
const CUTOFF_GRACE_MS = 59_000;
const SEARCH_DAYS = 21;

/** The next `count` tours an order placed at `now` can still catch, in order. */
export function upcomingDepartures(now: number, calendar: Calendar, count: number): Departure[] {
  const out: Departure[] = [];
  const today = calendar.at(now).date;
  for (let d = 0; d < SEARCH_DAYS && out.length < count; d++) {
    const date = calendar.addDays(today, d);
    for (const tour of toursOn(date, calendar)) {
      const cutoffAt = calendar.epochOf(date, tour.cutoff);
      if (cutoffAt + CUTOFF_GRACE_MS < now) continue;
      out.push({ tour, date, cutoffAt, arrivalAt: calendar.epochOf(date, tour.arrival) });
      if (out.length === count) break;
    }
  }
  return out;
}

export interface SpecialDay {
  date: string;
  tours: readonly Tour[];
}

/** Special days from today on, within `days`, in date order. */
export function upcomingSpecialDays(now: number, calendar: Calendar, days = 366): SpecialDay[] {
  const today = calendar.at(now).date;
  const out: SpecialDay[] = [];
  for (let d = 0; d < days; d++) {
    const date = calendar.addDays(today, d);
    const tours = SPECIAL_DAYS[date.slice(5)];
    if (tours !== undefined) out.push({ date, tours });
  }
  return out;
}
