import type { CustomerState } from './state.js';

/**
 * What the sandbox forgets, so that a customer's state (and the row that persists it) stays bounded:
 * delivery notices with their delivery notes and booked returns, return announcements with their slips,
 * and take-back offers, 30 days after they were made, like order ids (`ORDER_ID_RETENTION_MS`). A notice
 * can be returned against until 14 days after its document date, which is at most a few days after the
 * notice was made, so nothing still returnable is forgotten.
 */
export const RECORD_RETENTION_MS = 30 * 86_400_000;

/**
 * Forgets what is past retention; true if anything was. Each map is in creation order and a customer's
 * creation times rise, so the first record still kept ends the look: a request reads what expires, not
 * the customer's 30 days of history.
 */
export function forgetPastRetention(customer: CustomerState, now: number): boolean {
  const due = (at: number) => now - at > RECORD_RETENTION_MS;
  let changed = false;
  for (const [number, stored] of customer.notices) {
    if (!due(stored.createdAt)) break;
    customer.notices.delete(number);
    forgetDocument(customer, stored.notice.documentId);
    for (const key of customer.returnedUnits.keys()) {
      if (key.startsWith(`${number}|`)) customer.returnedUnits.delete(key);
    }
    changed = true;
  }
  for (const [id, stored] of customer.announcements) {
    if (!due(stored.announcedAt)) break;
    customer.announcements.delete(id);
    for (const portion of stored.response.answer?.portions ?? [])
      forgetDocument(customer, portion.documentId);
    changed = true;
  }
  for (const [id, offer] of customer.takeBackOffers) {
    if (!due(offer.requestedAt)) break;
    customer.takeBackOffers.delete(id);
    changed = true;
  }
  return changed;
}

/** A delivery note's or return slip's document (`deliveries.ts`, `returns.ts` give each its own id). */
function forgetDocument(customer: CustomerState, id: string | undefined): void {
  if (id === undefined) return;
  customer.documents.delete(id);
  customer.renderedDocuments.delete(id);
}
