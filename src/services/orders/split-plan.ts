/**
 * Which wholesaler gets which line of a split order (docs/split-orders.md "The plan"). Pure: the
 * availability answers come in as units per PZN (read with `deliverable`), the plan goes out.
 *
 * Per line, with the wholesalers in the client's order of preference:
 * 1. the first wholesaler that delivers the full quantity takes the whole line (one order, one delivery);
 * 2. otherwise the line is split: each wholesaler in turn takes what it delivers of what is still open,
 *    until the line is covered;
 * 3. what no wholesaler delivers is reported as undeliverable.
 * A line never gets more than its requested quantity in total; a wholesaler gets at most one allocation
 * per line; the same input always gives the same plan.
 */

export interface SplitLineRequest {
  pzn: string;
  quantity: number;
}

export interface WholesalerOffer {
  wholesaler: string;
  /** Units it delivers per PZN (what `deliverable` reads from its answer); null: it did not answer. */
  units: ReadonlyMap<string, number> | null;
}

interface Allocation {
  wholesaler: string;
  quantity: number;
}

export interface PlannedLine {
  pzn: string;
  quantity: number;
  /** In order of preference; empty when nothing is deliverable. */
  allocations: Allocation[];
  /** What no wholesaler that answered delivers. */
  undeliverable: number;
}

export function planSplit(
  lines: readonly SplitLineRequest[],
  offers: readonly WholesalerOffer[],
): PlannedLine[] {
  return lines.map((line) => planLine(line, offers));
}

function planLine(line: SplitLineRequest, offers: readonly WholesalerOffer[]): PlannedLine {
  const unitsAt = (offer: WholesalerOffer) => Math.max(0, Math.floor(offer.units?.get(line.pzn) ?? 0));
  const whole = offers.find((offer) => unitsAt(offer) >= line.quantity);
  if (whole !== undefined) {
    return {
      pzn: line.pzn,
      quantity: line.quantity,
      allocations: [{ wholesaler: whole.wholesaler, quantity: line.quantity }],
      undeliverable: 0,
    };
  }
  const allocations: Allocation[] = [];
  let open = line.quantity;
  for (const offer of offers) {
    if (open === 0) break;
    const take = Math.min(open, unitsAt(offer));
    if (take === 0) continue;
    allocations.push({ wholesaler: offer.wholesaler, quantity: take });
    open -= take;
  }
  return { pzn: line.pzn, quantity: line.quantity, allocations, undeliverable: open };
}

/** The lines each wholesaler gets, in order of preference and, per wholesaler, in request order. */
export function ordersOfPlan(
  plan: readonly PlannedLine[],
  preference: readonly string[],
): { wholesaler: string; lines: SplitLineRequest[] }[] {
  return preference.flatMap((wholesaler) => {
    const lines = plan.flatMap((line) =>
      line.allocations
        .filter((a) => a.wholesaler === wholesaler)
        .map((a) => ({ pzn: line.pzn, quantity: a.quantity })),
    );
    return lines.length === 0 ? [] : [{ wholesaler, lines }];
  });
}
