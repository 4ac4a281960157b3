import { deliveryHistory } from '../../services/deliveries/history.js';
import { confirmDeliveries, listNewDeliveries } from '../../services/deliveries/notices.js';
import type { AppDeps } from '../app-deps.js';
import { customerRequest, Msv3CredentialHeaders } from '../msv3-credentials.js';
import { withCallNotes } from '../request-notes.js';
import { routeErrors, V2_CALL_ERRORS } from '../route-errors.js';
import { WholesalerQuerySchema } from '../schemas/common.js';
import {
  ConfirmBodySchema,
  ConfirmResponseSchema,
  DeliveriesResponseSchema,
  HistoryQuerySchema,
  HistoryResponseSchema,
} from '../schemas/deliveries.js';
import type { GatewayApp } from '../types.js';

const V2_NOTES = {
  operation_not_supported:
    'the wholesaler speaks MSV3 v1, which has no delivery notices, returns or documents',
};
const LIST_ERRORS = routeErrors([V2_CALL_ERRORS], V2_NOTES);
const CONFIRM_ERRORS = routeErrors([V2_CALL_ERRORS], V2_NOTES);
const HISTORY_ERRORS = routeErrors(['delivery_not_found', V2_CALL_ERRORS], V2_NOTES);

export function registerDeliveryRoutes(app: GatewayApp, deps: AppDeps): void {
  const services = deps.services.deliveries;

  app.get(
    '/v1/deliveries',
    {
      config: { errors: LIST_ERRORS },
      schema: {
        operationId: 'listDeliveries',
        tags: ['deliveries'],
        summary: 'Unconfirmed delivery notices (lieferavisAbfrageNeu)',
        responseDescription: 'The delivery notices the wholesaler has not had confirmed yet, oldest first.',
        description: `The delivery notices the wholesaler has not had confirmed yet (a notice stays here until \`POST /v1/deliveries/confirm\`). \`items\` has one entry per PZN with the quantities of its lines summed; \`lines\` keeps every printed line with batches, expiry dates, parcels and sub-order ids. Every notice is remembered for this pharmacy (account, mode, wholesaler, MSV3 user name) for \`GET /v1/deliveries/history\`; the first sighting sends \`delivery.received\` (and \`delivery.shortage\` when it has shortages) to webhook subscribers.`,
        headers: Msv3CredentialHeaders,
        querystring: WholesalerQuerySchema,
        response: { 200: DeliveriesResponseSchema },
      },
    },
    async (request) =>
      listNewDeliveries(withCallNotes(request, services), customerRequest(request, request.query.wholesaler)),
  );

  app.post(
    '/v1/deliveries/confirm',
    {
      config: { idempotent: true, errors: CONFIRM_ERRORS },
      schema: {
        operationId: 'confirmDeliveries',
        tags: ['deliveries'],
        summary: 'Confirm delivery notices (lieferavisBestaetigen)',
        responseDescription: 'The delivery notices the wholesaler marked as confirmed.',
        description: `Tells the wholesaler the notices were processed; afterwards \`GET /v1/deliveries\` no longer lists them. Confirming again is harmless. Accepts \`Idempotency-Key\`.`,
        headers: Msv3CredentialHeaders,
        body: ConfirmBodySchema,
        response: { 200: ConfirmResponseSchema },
      },
    },
    async (request) =>
      confirmDeliveries(
        withCallNotes(request, services),
        customerRequest(request, request.body.wholesaler),
        request.body.tracking_numbers,
      ),
  );

  app.get(
    '/v1/deliveries/history',
    {
      config: { errors: HISTORY_ERRORS },
      schema: {
        operationId: 'deliveryHistory',
        tags: ['deliveries'],
        summary: 'Past delivery notices: live lookup or what this gateway has seen',
        responseDescription: 'One page of past delivery notices, or the one found by the live lookup.',
        description: `MSV3 has no history listing; it can only look up one notice by delivery-note number or barcode (lieferavisAbfrageHist). So this endpoint has two modes.

**With \`tracking_number\` and/or \`barcode\`:** a live lookup at the wholesaler (any age, confirmed or not); 404 \`delivery_not_found\` when it knows no such note. The result is remembered like any notice seen; \`limit\` and \`starting_after\` do not apply, and \`date_from\`/\`date_to\` are refused with 400 \`invalid_request\` (they bound the stored listing only; the notice found carries its own date).

**Without:** the notices this gateway has seen for this pharmacy (account, mode, wholesaler and MSV3 user name), newest document date first (tracking number descending on the same date), \`limit\` per page; pass the last \`tracking_number\` as \`starting_after\` for the next page while \`has_more\` is true. \`date_from\`/\`date_to\` bound the document date (inclusive); \`date_from\` after \`date_to\` is 400 \`invalid_request\` (\`param\` \`date_from\`). The gateway first checks the credentials with the wholesaler (verbindungTesten) in the same request, so only a pharmacy the wholesaler accepts can read its stored notices.

Each entry is a delivery notice plus \`first_seen_at\`, \`last_seen_at\` and \`confirmed_at\` (null unless confirmed through this gateway).`,
        headers: Msv3CredentialHeaders,
        querystring: HistoryQuerySchema,
        response: { 200: HistoryResponseSchema },
      },
    },
    async (request) => {
      const q = request.query;
      return deliveryHistory(withCallNotes(request, services), customerRequest(request, q.wholesaler), {
        trackingNumber: q.tracking_number,
        barcode: q.barcode,
        limit: q.limit,
        startingAfter: q.starting_after,
        dateFrom: q.date_from,
        dateTo: q.date_to,
      });
    },
  );
}
