import { Type } from 'typebox';
import { checkBulkAvailability } from '../../services/availability/bulk.js';
import { checkAvailability } from '../../services/availability/single.js';
import type { AppDeps } from '../app-deps.js';
import { Msv3CredentialHeaders, msv3Credentials } from '../msv3-credentials.js';
import { upstreamFor } from '../request-notes.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import {
  AvailabilityItemSchema,
  AvailabilityItemsSchema,
  INVALID_PZN_PROPERTIES,
} from '../schemas/availability.js';
import { PznSchema, WholesalerIdSchema } from '../schemas/common.js';
import type { GatewayApp } from '../types.js';

const AVAILABILITY_ERRORS = routeErrors([WHOLESALER_CALL_ERRORS], {
  invalid_request: 'the message and `param` name the field, e.g. `items[3].pzn`',
});
const BULK_ERRORS = routeErrors([WHOLESALER_CALL_ERRORS], {
  wholesaler_function_not_agreed: 'bulk availability is not part of the contract',
});

/** The body of POST /v1/availability (exported for bench/gateway's pass-through baseline). */
export const AvailabilityBody = Type.Object(
  {
    wholesaler: WholesalerIdSchema,
    items: AvailabilityItemsSchema,
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        items: [
          { pzn: '04114918', quantity: 3 },
          { pzn: '1234562', quantity: 10, demand_type: 'unspecified' },
          { pzn: '04114917', quantity: 1 },
        ],
      },
    ],
  },
);

const AVAILABILITY_EXAMPLE = {
  wholesaler: 'phoenix',
  response_type: 'standard',
  items: [
    {
      pzn: '04114918',
      quantity_requested: 3,
      available: true,
      deliveries: [
        {
          type: 'normal',
          quantity: 3,
          tour: 'Mittagstour',
          estimated_at: '2025-03-18T14:30:00',
          estimated_at_offset: '+01:00',
          reason: null,
          tour_deviation: false,
        },
      ],
      substitution: null,
      invalid_pzn: null,
    },
    {
      pzn: '01234562',
      quantity_requested: 10,
      available: false,
      deliveries: [
        {
          type: 'network',
          quantity: 4,
          tour: null,
          estimated_at: '2025-03-18T18:00:00',
          estimated_at_offset: '+01:00',
          reason: null,
          tour_deviation: false,
        },
        {
          type: 'backorder',
          quantity: 6,
          tour: null,
          estimated_at: null,
          estimated_at_offset: null,
          reason: 'out_of_stock',
          tour_deviation: false,
        },
      ],
      substitution: null,
      invalid_pzn: null,
    },
    {
      pzn: '04114917',
      quantity_requested: 1,
      available: false,
      deliveries: [],
      substitution: null,
      invalid_pzn: {
        reason: 'wrong_check_digit',
        expected_check_digit: '8',
        message: '04114917 has a wrong check digit: a PZN starting with 0411491 ends in 8 (04114918).',
      },
    },
  ],
};

const BulkBody = Type.Object(
  {
    wholesaler: WholesalerIdSchema,
    pzns: Type.Array(PznSchema, {
      minItems: 1,
      maxItems: 10_000,
      description: '1 to 10,000 PZNs; repeats are asked once.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ wholesaler: 'phoenix', pzns: ['04114918', '9990010', '04114917'] }],
  },
);

export function registerAvailabilityRoutes(app: GatewayApp, deps: AppDeps): void {
  app.post(
    '/v1/availability',
    {
      config: { errors: AVAILABILITY_ERRORS },
      schema: {
        operationId: 'checkAvailability',
        tags: ['availability'],
        summary: 'Real-time availability of up to 50 articles (verfuegbarkeitAnfragen)',
        responseDescription:
          'One entry per requested article, in request order: what the wholesaler would deliver, when, and any substitution; or, for a PZN with a wrong check digit, why it was not asked (`invalid_pzn`).',
        description: `Delivery portions, estimated delivery times and substitutions per article, in request order. \`response_type\` is \`standard\` for a specific MSV3 answer (RTyp Spezifisch: normal and network portions carry a time or tour) and \`unspecific\` for RTyp Unspezifisch (the contract has no specific answers; times, tours and quantities may be missing). A PZN may occur once per request. A PZN's last digit is a check digit: an item whose PZN does not end in the one its first seven digits call for is not sent to the wholesaler; it comes back with \`invalid_pzn\` (the check digit it would need) and \`available: false\`, and the other items are asked as usual.`,
        headers: Msv3CredentialHeaders,
        body: AvailabilityBody,
        response: {
          200: Type.Object(
            {
              wholesaler: Type.String(),
              response_type: Type.Union([Type.Enum(['standard', 'unspecific']), Type.Null()], {
                description: 'Null when no article was asked: every PZN had a wrong check digit.',
              }),
              items: Type.Array(AvailabilityItemSchema),
            },
            { examples: [AVAILABILITY_EXAMPLE] },
          ),
        },
      },
    },
    async (request) =>
      checkAvailability(
        upstreamFor(request, deps.upstream),
        request.auth,
        msv3Credentials(request, request.body.wholesaler),
        request.body,
      ),
  );

  app.post(
    '/v1/availability/bulk',
    {
      config: { errors: BULK_ERRORS },
      schema: {
        operationId: 'checkBulkAvailability',
        tags: ['availability'],
        summary: 'Which of up to 10,000 PZNs are in stock (verfuegbarkeitAnfragenBulk)',
        responseDescription:
          'The requested PZNs split into in stock and not; PZNs with a wrong check digit are not asked and are listed in `invalid_pzns`.',
        description: `A contract function: without it the wholesaler refuses with 403 \`wholesaler_function_not_agreed\`. PZNs with a wrong check digit are not sent; they come back in \`invalid_pzns\`.`,
        headers: Msv3CredentialHeaders,
        body: BulkBody,
        response: {
          200: Type.Object(
            {
              wholesaler: Type.String(),
              available_pzns: Type.Array(Type.String(), {
                description: 'The in-stock subset, 8 digits each.',
              }),
              unavailable_pzns: Type.Array(Type.String(), {
                description: 'Additive: the rest of the requested PZNs that were asked.',
              }),
              invalid_pzns: Type.Array(
                Type.Object(
                  { pzn: Type.String({ description: '8 digits.' }), ...INVALID_PZN_PROPERTIES },
                  { additionalProperties: false },
                ),
                {
                  description:
                    'Additive: requested PZNs that are no PZNs (wrong check digit), not sent to the wholesaler and in neither list above.',
                },
              ),
            },
            {
              examples: [
                {
                  wholesaler: 'phoenix',
                  available_pzns: ['04114918'],
                  unavailable_pzns: ['09990010'],
                  invalid_pzns: [
                    {
                      pzn: '04114917',
                      reason: 'wrong_check_digit',
                      expected_check_digit: '8',
                      message:
                        '04114917 has a wrong check digit: a PZN starting with 0411491 ends in 8 (04114918).',
                    },
                  ],
                },
              ],
            },
          ),
        },
      },
    },
    async (request) =>
      checkBulkAvailability(
        upstreamFor(request, deps.upstream),
        request.auth,
        msv3Credentials(request, request.body.wholesaler),
        request.body,
      ),
  );
}
