import type { FastifyRequest } from 'fastify';
import type { OrderKeyScope } from '../../services/orders/ids.js';
import { refuseInvalidPzns } from '../../services/pzn-check.js';
import { announceReturn, enquireReturn } from '../../services/returns/announce.js';
import { requestTakeBackOffer } from '../../services/returns/offers.js';
import type { AppDeps } from '../app-deps.js';
import { customerRequest, Msv3CredentialHeaders } from '../msv3-credentials.js';
import { upstreamFor } from '../request-notes.js';
import { routeErrors, V2_CALL_ERRORS, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import {
  AnnounceBodySchema,
  OfferBodySchema,
  OfferResponseSchema,
  ReturnAnnouncementResponseSchema,
  ReturnBodySchema,
  ReturnEnquiryResponseSchema,
} from '../schemas/returns.js';
import type { GatewayApp } from '../types.js';

/** The Idempotency-Key the request holds, as the seed of its MSV3 ids; undefined without a key. */
function keyScopeOf(request: FastifyRequest): OrderKeyScope | undefined {
  const held = request.idempotency;
  if (held === null) return undefined;
  return { ...request.auth, idempotencyKey: held.key, firstUsedAt: held.firstUsedAt };
}

const RETURN_NOTES = {
  invalid_request:
    'the message and `param` name the field, e.g. `items[3].pzn` for a repeated PZN or one whose check digit is wrong',
  return_outcome_unknown: 'sent, answer lost: retry with the same Idempotency-Key',
};
const ENQUIRY_ERRORS = routeErrors([V2_CALL_ERRORS], RETURN_NOTES);
const ANNOUNCE_ERRORS = routeErrors(['return_outcome_unknown', V2_CALL_ERRORS], RETURN_NOTES);
const OFFER_ERRORS = routeErrors(['return_outcome_unknown', WHOLESALER_CALL_ERRORS], {
  ...RETURN_NOTES,
  wholesaler_function_not_agreed: 'no take-back offers in the contract: MSV3 AuthorizationFault',
});

export function registerReturnRoutes(app: GatewayApp, deps: AppDeps): void {
  app.post(
    '/v1/returns',
    {
      config: { idempotent: true, errors: ENQUIRY_ERRORS },
      schema: {
        operationId: 'enquireReturn',
        tags: ['returns'],
        summary: 'Ask whether the wholesaler would take items back (retourenavisAnfragen)',
        responseDescription: "The wholesaler's verdict per item; nothing is announced.",
        description: `A non-binding return enquiry: the wholesaler assesses each item (original delivery note, PZN, quantity, reason, optionally batch and expiry) and answers with a \`verdict\` and \`accepted\` per item. Nothing is announced; use \`POST /v1/returns/announce\` for that. Accepts \`Idempotency-Key\`.`,
        headers: Msv3CredentialHeaders,
        body: ReturnBodySchema,
        response: { 200: ReturnEnquiryResponseSchema },
      },
    },
    async (request) => {
      refuseInvalidPzns(request.body.items, request.body.wholesaler);
      return enquireReturn(
        upstreamFor(request, deps.upstream),
        customerRequest(request, request.body.wholesaler),
        request.body.items,
        keyScopeOf(request),
      );
    },
  );

  app.post(
    '/v1/returns/announce',
    {
      config: { idempotent: true, errors: ANNOUNCE_ERRORS },
      schema: {
        operationId: 'announceReturn',
        tags: ['returns'],
        summary: 'Announce a return, binding (retourenavisAnkuendigen)',
        responseDescription:
          'The return as the wholesaler booked it: its portions, each with a verdict and, when accepted, a reference and pick-up.',
        description: `The binding return announcement. The wholesaler splits the items into \`portions\` (1 to 15), each with one verdict; accepted portions carry the wholesaler's \`reference\`, a pick-up time or tour and, if the wholesaler prints it, a return slip \`document_id\` for \`GET /v1/documents/{id}\` (otherwise print your own slip with the reference). Send an \`Idempotency-Key\`: the MSV3 announcement id is derived from it, so a retry after a lost answer cannot announce twice: when the answer is lost after sending (timeout, dropped connection, unreadable answer) the answer is 504 \`return_outcome_unknown\`, and when the wholesaler answers with an error after receiving it (e.g. 502 \`wholesaler_fault\`) the error says it may have been booked; either way the key stays bound to the request: retry it with the same key to get the wholesaler's answer.`,
        headers: Msv3CredentialHeaders,
        body: AnnounceBodySchema,
        response: { 200: ReturnAnnouncementResponseSchema },
      },
    },
    async (request) => {
      refuseInvalidPzns(request.body.items, request.body.wholesaler);
      return announceReturn(
        upstreamFor(request, deps.upstream),
        customerRequest(request, request.body.wholesaler),
        request.body.items,
        request.body.company,
        keyScopeOf(request),
      );
    },
  );

  app.post(
    '/v1/returns/offers',
    {
      config: { idempotent: true, errors: OFFER_ERRORS },
      schema: {
        operationId: 'requestTakeBackOffer',
        tags: ['returns'],
        summary: 'Offer articles for take-back (ruecknahmeangebotAnfordern)',
        responseDescription:
          'The wholesaler acknowledged the offer with a reference to quote when following up.',
        description: `Lists articles the pharmacy would like to give back. **MSV3 carries no prices, credits or per-article verdicts here**: the wholesaler only acknowledges the request with a \`reference_id\` to quote when it (or you) follows up by phone, mail or fax. Works with MSV3 v1 and v2 wholesalers, but only for customers whose contract includes take-back offers (\`capabilities.return_offers\` in \`GET /v1/contracts\`); otherwise 403 \`wholesaler_function_not_agreed\`. Each PZN once per request (\`04114918\` and \`4114918\` are the same). Accepts \`Idempotency-Key\` (the MSV3 request id is derived from it).`,
        headers: Msv3CredentialHeaders,
        body: OfferBodySchema,
        response: { 200: OfferResponseSchema },
      },
    },
    async (request) => {
      refuseInvalidPzns(request.body.items, request.body.wholesaler);
      return requestTakeBackOffer(
        upstreamFor(request, deps.upstream),
        customerRequest(request, request.body.wholesaler),
        request.body.items,
        keyScopeOf(request),
      );
    },
  );
}
