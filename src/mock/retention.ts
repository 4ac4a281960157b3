import type { CustomerState, DocumentSource } from './state.js';

/**
 * What the sandbox forgets, so that a customer's state (and the row that persists it) stays bounded:
 * delivery notices with their delivery notes and booked returns, return announcements with their slips,
 * and take-back offers, 30 days after they were made, like order ids (`ORDER_ID_RETENTION_MS`). A notice
 * can be returned against until 14 days after its document date, which is at most a few days after the
 * notice was made, so nothing still returnable is forgotten.
 */
export const RECORD_RETENTION_MS = 30 * 86_400_000;

/** Forgets what is past retention; true if anything was. */
export function forgetPastRetention(customer: CustomerState, now: number): boolean {
  const due = (at: number) => now - at > RECORD_RETENTION_MS;
  let changed = false;
  for (const [number, stored] of customer.notices) {
    if (!due(stored.createdAt)) continue;
    customer.notices.delete(number);
    forgetDocuments(customer, (s) => s.kind === 'delivery-note' && s.deliveryNoteNumber === number);
    for (const key of customer.returnedUnits.keys()) {
      if (key.startsWith(`${number}|`)) customer.returnedUnits.delete(key);
    }
    changed = true;
  }
  for (const [id, stored] of customer.announcements) {
    if (!due(stored.announcedAt)) continue;
    customer.announcements.delete(id);
    forgetDocuments(customer, (s) => s.kind === 'return-slip' && s.announcementId === id);
    changed = true;
  }
  for (const [id, offer] of customer.takeBackOffers) {
    if (!due(offer.requestedAt)) continue;
    customer.takeBackOffers.delete(id);
    changed = true;
  }
  return changed;
}

function forgetDocuments(customer: CustomerState, matches: (source: DocumentSource) => boolean): void {
  for (const [id, source] of customer.documents) {
    if (!matches(source)) continue;
    customer.documents.delete(id);
    customer.renderedDocuments.delete(id);
  }
}
