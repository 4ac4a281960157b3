import { Type } from 'typebox';
import { DeliveryPortionSchema, PznSchema, SubstitutionSchema } from './common.js';

/** Schemas of the availability endpoints: a single wholesaler's (POST /v1/availability) and the comparison's. */

/** The articles asked about: 1 to 50, each PZN once. */
export const AvailabilityItemsSchema = Type.Array(
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
);

/** Why a requested PZN was not sent (services/pzn-check.ts). */
export const INVALID_PZN_PROPERTIES = {
  reason: Type.Enum(['wrong_check_digit', 'not_issuable'], {
    description:
      '`wrong_check_digit`: another last digit would make it a PZN (`expected_check_digit`); `not_issuable`: no last digit would, so no article has a PZN starting with these seven digits.',
  }),
  expected_check_digit: Type.Union([Type.String(), Type.Null()], {
    description: 'The check digit the first seven digits call for, `0` to `9`; null with `not_issuable`.',
  }),
  message: Type.String({ description: 'One sentence for a person.' }),
};
const InvalidPznSchema = Type.Object(INVALID_PZN_PROPERTIES, { additionalProperties: false });

export const AvailabilityItemSchema = Type.Object(
  {
    pzn: Type.String({ description: '8 digits.' }),
    quantity_requested: Type.Integer(),
    available: Type.Boolean({
      description:
        'Not an MSV3 field: true when every delivery portion is `normal` or `network` and no binding substitution replaces the article.',
    }),
    deliveries: Type.Array(DeliveryPortionSchema, {
      description: 'MSV3 `Anteile`, 1 to 5; none for a PZN that was not asked (`invalid_pzn`).',
    }),
    substitution: SubstitutionSchema,
    invalid_pzn: Type.Union([InvalidPznSchema, Type.Null()], {
      description:
        'Not an MSV3 field: null when the wholesaler was asked. Otherwise the PZN is no PZN (its last digit is a check digit) and was not sent: correct it and ask again.',
    }),
  },
  { additionalProperties: false },
);
