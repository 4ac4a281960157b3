import { ApiError } from '../http/errors.js';
import { lieferavisAbfrageHist } from '../msv3/operations/lieferavis-abfrage-hist.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { listSeenNotices, UnknownCursorError } from '../store/delivery-notices.js';
import {
  type CustomerRequest,
  customerScopeOf,
  type DeliveryDeps,
  rememberNotices,
  resolveWholesaler,
} from './deliveries.js';
import { type DeliveryHistoryEntryJson, toDeliveryHistoryEntryJson } from './deliveries-json.js';
import { assertSupports, callWholesaler } from './wholesaler-call.js';

/**
 * `GET /v1/deliveries/history` (SPEC 4.11, PROTOCOL.md §5.9). MSV3 can only look up one notice by
 * delivery-note number or barcode (`lieferavisAbfrageHist`); it has no listing. So:
 *
 * - with `tracking_number` and/or `barcode`: a live lookup, stored like any notice seen;
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

export async function deliveryHistory(
  deps: DeliveryDeps,
  request: CustomerRequest,
  query: HistoryQuery,
): Promise<DeliveryHistoryJson> {
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
