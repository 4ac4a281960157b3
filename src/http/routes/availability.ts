import { Type } from 'typebox';
import { checkBulkAvailability } from '../../services/availability/bulk.js';
import { checkAvailability } from '../../services/availability/single.js';
import type { AppDeps } from '../app-deps.js';
import { Msv3CredentialHeaders, msv3Credentials } from '../msv3-credentials.js';
import { upstreamFor } from '../request-notes.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import {
  DeliveryPortionSchema,
  PznSchema,
  SubstitutionSchema,
  WholesalerIdSchema,
} from '../schemas/common.js';
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
    items: Type.Array(
      Type.Object(
        {
          pzn: PznSchema,
          quantity: Type.Integer({
            minimum: 1,
            maximum: 99_999,
            description: 'Requested quantity: 1 to 99,999 (MSV3 v2), 1 to 9,999 for MSV3 v1 wholesalers.',
          }),
          demand_type: Type.Optional(
            Type.Enum(['direct', 'one_of_many', 'unspecified'], {
              default: 'direct',
              description:
                'MSV3 `Bedarf`: `direct` (this article is needed), `one_of_many` (one of the `one_of_many` items of this request is needed), `unspecified`. MSV3 v1 knows only a request-wide flag: set when every item is `one_of_many`.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50, description: '1 to 50 articles, each PZN at most once.' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        items: [
          { pzn: '04114918', quantity: 3 },
          { pzn: '1234567', quantity: 10, demand_type: 'unspecified' },
        ],
      },
    ],
  },
);

const AvailabilityItemSchema = Type.Object(
  {
    pzn: Type.String({ description: '8 digits.' }),
    quantity_requested: Type.Integer(),
    available: Type.Boolean({
      description:
        'Not an MSV3 field: true when every delivery portion is `normal` or `network` and no binding substitution replaces the article.',
    }),
    deliveries: Type.Array(DeliveryPortionSchema, { description: 'MSV3 `Anteile`, 1 to 5.' }),
    substitution: SubstitutionSchema,
  },
  { additionalProperties: false },
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
    },
    {
      pzn: '01234567',
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
  { additionalProperties: false, examples: [{ wholesaler: 'phoenix', pzns: ['04114918', '9990010'] }] },
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
        description: `Delivery portions, estimated delivery times and substitutions per article, in request order. \`response_type\` is \`standard\` for a specific MSV3 answer (RTyp Spezifisch: normal and network portions carry a time or tour) and \`unspecific\` for RTyp Unspezifisch (the contract has no specific answers; times, tours and quantities may be missing). A PZN may occur once per request.`,
        headers: Msv3CredentialHeaders,
        body: AvailabilityBody,
        response: {
          200: Type.Object(
            {
              wholesaler: Type.String(),
              response_type: Type.Enum(['standard', 'unspecific']),
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
        description: `A contract function: without it the wholesaler refuses with 403 \`wholesaler_function_not_agreed\`.`,
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
                description: 'Additive: the rest of the requested PZNs.',
              }),
            },
            {
              examples: [
                { wholesaler: 'phoenix', available_pzns: ['04114918'], unavailable_pzns: ['09990010'] },
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
