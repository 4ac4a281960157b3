/**
 * Which wholesaler to order one article from, given every wholesaler's answer in the caller's preference
 * order (docs/multi-wholesaler.md "Recommendation"):
 *
 * 1. the first wholesaler in preference order that delivers the full quantity;
 * 2. else the one delivering the most units, the earliest among equals, the preferred among those;
 * 3. else none (`wholesaler: null`).
 *
 * A wholesaler that failed or did not answer in time is never recommended. What a wholesaler delivers
 * is `deliverable` (deliverable.ts): units of normal and network portions and their earliest time.
 * `reason` says why in one sentence a pharmacist reads at the counter.
 */

export type Offer =
  | { wholesaler: string; answered: true; units: number; earliest: string | null }
  | { wholesaler: string; answered: false; timedOut: boolean };

export interface Recommendation {
  /** null: no wholesaler that answered delivers any of it. */
  wholesaler: string | null;
  units: number;
  estimated_at: string | null;
  delivers_all: boolean;
  reason: string;
}

type Answered = Extract<Offer, { answered: true }>;

export function recommend(quantity: number, offers: readonly Offer[]): Recommendation {
  const answered = offers.filter((offer): offer is Answered => offer.answered);
  const full = answered.find((offer) => offer.units >= quantity);
  if (full !== undefined) {
    const before = offers.slice(0, offers.indexOf(full));
    const lead = before.length === 0 ? '' : `${before.map((o) => shortfall(o, quantity)).join(', ')}; `;
    return chosen(
      full,
      quantity,
      `${lead}${full.wholesaler} delivers all ${quantity}${when(full.earliest)}.`,
    );
  }
  const best = answered.reduce<Answered | undefined>(
    (top, offer) => (better(offer, top) ? offer : top),
    undefined,
  );
  const silent = offers.filter((offer) => !offer.answered).map((offer) => shortfall(offer, quantity));
  const tail = silent.length === 0 ? '' : ` (${silent.join(', ')})`;
  if (best === undefined || best.units === 0) {
    const reason =
      answered.length === 0
        ? `No wholesaler answered${tail}.`
        : `No wholesaler that answered can deliver any of the ${quantity}${tail}.`;
    return { wholesaler: null, units: 0, estimated_at: null, delivers_all: false, reason };
  }
  const others = answered.filter((offer) => offer !== best).map((offer) => shortfall(offer, quantity));
  const rest = [...others, ...silent];
  return chosen(
    best,
    quantity,
    `No wholesaler delivers all ${quantity}; ${best.wholesaler} delivers the most, ${best.units} of ${quantity}` +
      `${when(best.earliest)}${rest.length === 0 ? '' : ` (${rest.join(', ')})`}.`,
  );
}

/** More units; then an earlier time (a time beats none); else the one earlier in preference order. */
function better(offer: Answered, top: Answered | undefined): boolean {
  if (top === undefined) return true;
  if (offer.units !== top.units) return offer.units > top.units;
  if (offer.earliest === null) return false;
  // Local ISO date-times compare as strings (deliverable.ts).
  return top.earliest === null || offer.earliest < top.earliest;
}

function chosen(offer: Answered, quantity: number, reason: string): Recommendation {
  return {
    wholesaler: offer.wholesaler,
    units: offer.units,
    estimated_at: offer.earliest,
    delivers_all: offer.units >= quantity,
    reason,
  };
}

function shortfall(offer: Offer, quantity: number): string {
  if (!offer.answered) {
    return `${offer.wholesaler} ${offer.timedOut ? 'did not answer in time' : 'answered with an error'}`;
  }
  if (offer.units === 0) return `${offer.wholesaler} cannot deliver it`;
  return `${offer.wholesaler} delivers only ${offer.units} of ${quantity}`;
}

/** ` on 18.03. at 14:30` from a local `2025-03-18T14:30:00` (as a German pharmacy writes it); nothing without a time. */
function when(earliest: string | null): string {
  const match = earliest === null ? null : /^\d{4}-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(earliest);
  if (match === null) return '';
  const [, month, day, hour, minute] = match;
  return ` on ${day}.${month}. at ${hour}:${minute}`;
}
