import { ApiError } from '../../core/errors.js';
import { lieferavisAbfrageHist } from '../../msv3/operations/lieferavis-abfrage-hist.js';
import { verbindungTesten } from '../../msv3/operations/verbindung-testen.js';
import { listSeenNotices, UnknownCursorError } from '../../store/delivery-notices.js';
import { assertSupports, callWholesaler } from '../../wholesalers/call.js';
import {
  type CustomerRequest,
  customerScopeOf,
  type DeliveryDeps,
  rememberNotices,
  resolveWholesaler,
} from './notices.js';
import { type DeliveryHistoryEntryJson, toDeliveryHistoryEntryJson } from './view.js';

/**
 * `GET /v1/deliveries/history` (docs/msv3.md "Delivery history"). MSV3 can only look up one notice by
 * delivery-note number or barcode (`lieferavisAbfrageHist`); it has no listing. So:
 *
 * - with `tracking_number` and/or `barcode`: a live lookup, stored like any notice seen; the date
 *   bounds belong to the stored listing, so a lookup with `date_from`/`date_to` is refused (400) rather
 *   than answered with a notice the dates would have excluded;
 * - without: the notices this gateway has stored for this customer, a page at a time. They are read
 *   only after the wholesaler accepted the customer's credentials in this same request (a
 *   `verbindungTesten` call), so knowing a user name is not enough to read its history.
 */

export interface HistoryQuery {
  trackingNumber?: string;
  barcode?: string;
  limit: number;
  startingAfter?: string;
  dateFrom?: string;
  dateTo?: string;
}

export interface DeliveryHistoryJson {
  wholesaler: string;
  deliveries: DeliveryHistoryEntryJson[];
  has_more: boolean;
}

/** Refuses what the schema cannot express: an empty date range, dates on a lookup. No wholesaler call. */
function checkHistoryQuery(query: HistoryQuery, wholesaler: string): void {
  const refuse = (param: string, message: string) =>
    new ApiError('invalid_request', message, { wholesaler, param });
  const isLookup = query.trackingNumber !== undefined || query.barcode !== undefined;
  if (isLookup && (query.dateFrom !== undefined || query.dateTo !== undefined)) {
    throw refuse(
      query.dateFrom !== undefined ? 'date_from' : 'date_to',
      'date_from and date_to bound the stored listing only; a lookup by tracking_number or barcode finds a notice of any date, so leave the dates out (the notice carries its date).',
    );
  }
  // Both are YYYY-MM-DD (schema), so comparing the strings compares the dates.
  if (query.dateFrom !== undefined && query.dateTo !== undefined && query.dateFrom > query.dateTo) {
    throw refuse('date_from', `date_from must not be after date_to (${query.dateFrom} > ${query.dateTo}).`);
  }
}

export async function deliveryHistory(
  deps: DeliveryDeps,
  request: CustomerRequest,
  query: HistoryQuery,
): Promise<DeliveryHistoryJson> {
  checkHistoryQuery(query, request.wholesaler);
  const wholesaler = await resolveWholesaler(deps, request);
  // A v1 wholesaler has no delivery notices at all: 422 before any call, also for the stored listing.
  assertSupports(wholesaler, lieferavisAbfrageHist);
  const clientSoftwareId = deps.upstream.clientSoftwareId;

  if (query.trackingNumber !== undefined || query.barcode !== undefined) {
    const { value } = await callWholesaler(
      deps.upstream,
      wholesaler,
      lieferavisAbfrageHist,
      request.credentials,
      {
        clientSoftwareId,
        deliveryNoteNumber: query.trackingNumber,
        barcodeReference: query.barcode,
      },
    );
    if (value.notices.length === 0) {
      throw new ApiError(
        'delivery_not_found',
        `${request.wholesaler} returned no delivery notice for that query.`,
        {
          wholesaler: request.wholesaler,
        },
      );
    }
    const stored = await rememberNotices(deps, request, value.notices);
    return {
      wholesaler: request.wholesaler,
      deliveries: stored.map(toDeliveryHistoryEntryJson),
      has_more: false,
    };
  }

  await callWholesaler(deps.upstream, wholesaler, verbindungTesten, request.credentials, {
    clientSoftwareId,
  });
  const scope = customerScopeOf(request);
  try {
    const page = await listSeenNotices(deps.db, scope, query);
    return {
      wholesaler: request.wholesaler,
      deliveries: page.notices.map(toDeliveryHistoryEntryJson),
      has_more: page.hasMore,
    };
  } catch (error) {
    if (!(error instanceof UnknownCursorError)) throw error;
    throw new ApiError(
      'invalid_request',
      `starting_after must be the tracking number of a delivery in this history; '${query.startingAfter}' is not.`,
      { wholesaler: request.wholesaler, param: 'starting_after' },
    );
  }
}
