import type { AvailabilityItem } from './single.js';

/**
 * What one wholesaler's availability answer for one article promises to deliver: the units of its
 * `normal` and `network` portions (those leave with a tour; back orders and special procurement have no
 * firm date) and the earliest estimated time among them. An article the wholesaler would replace by a
 * binding substitution, or that was not asked (`invalid_pzn`), delivers nothing of what was requested.
 * Comparing wholesalers and splitting an order over them both decide with this one reading
 * (docs/multi-wholesaler.md).
 */

export interface Deliverable {
  /** Units of the requested article that leave with a tour, at most the requested quantity. */
  units: number;
  /** The earliest local `estimated_at` of those portions, or null when none carries one. */
  earliest: string | null;
}

const DELIVERED = new Set(['normal', 'network']);

export function deliverable(item: AvailabilityItem): Deliverable {
  const binding = item.substitution !== null && item.substitution.reason !== 'proposal';
  if (item.invalid_pzn !== null || binding) return { units: 0, earliest: null };
  // Unspecific answers may leave a quantity out (nil Menge): such a portion covers what the portions
  // with a quantity leave of the requested quantity.
  const stated = item.deliveries.reduce((sum, portion) => sum + (portion.quantity ?? 0), 0);
  const unstated = Math.max(0, item.quantity_requested - stated);
  let units = 0;
  let earliest: string | null = null;
  for (const portion of item.deliveries) {
    if (!DELIVERED.has(portion.type)) continue;
    units += portion.quantity ?? unstated;
    // Local ISO date-times of one wholesaler compare as strings.
    if (portion.estimated_at !== null && (earliest === null || portion.estimated_at < earliest)) {
      earliest = portion.estimated_at;
    }
  }
  return { units: Math.min(units, item.quantity_requested), earliest };
}
