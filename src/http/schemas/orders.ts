import { Type } from 'typebox';
import { GATEWAY_ORDER_ID_PATTERN } from '../../services/orders/ids.js';
import { DELIVERY_PREFERENCES, MAX_ORDER_ITEMS } from '../../services/orders/request.js';
import {
  DeliveryPortionSchema,
  NullableString,
  PznSchema,
  SubstitutionSchema,
  WholesalerIdSchema,
} from './common.js';

/**
 * Schemas of POST /v1/orders and GET /v1/orders/{order_id}/status (docs/msv3.md "Orders", "Order status")
 * with examples.
 */

const PREFERENCE_DESCRIPTION =
  'MSV3 `Liefervorgabe`, how far the wholesaler may go: `normal` (Normal: regular stock only), `grouped` (MaxVerbund: also a partner warehouse), `backorder` (MaxNachlieferung: also back-order the rest), `disposition` (MaxDispo: also special procurement).';

const DeliveryPreferenceSchema = Type.Enum([...DELIVERY_PREFERENCES], {
  description: PREFERENCE_DESCRIPTION,
});

export const OrderBodySchema = Type.Object(
  {
    wholesaler: WholesalerIdSchema,
    items: Type.Array(
      Type.Object(
        {
          pzn: PznSchema,
          quantity: Type.Integer({
            minimum: 1,
            maximum: 99_999,
            description: 'Order quantity: 1 to 99,999 (MSV3 v2), 1 to 9,999 for MSV3 v1 wholesalers.',
          }),
          delivery_preference: Type.Optional(
            Type.Enum([...DELIVERY_PREFERENCES], { default: 'normal', description: PREFERENCE_DESCRIPTION }),
          ),
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: MAX_ORDER_ITEMS,
        description: `1 to ${MAX_ORDER_ITEMS} positions. Lines repeating a PZN with the same delivery_preference are merged into one position (quantities summed); with different preferences the request is refused.`,
      },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        items: [
          { pzn: '04114918', quantity: 3 },
          { pzn: '1234562', quantity: 10, delivery_preference: 'backorder' },
        ],
      },
    ],
  },
);

export const OrderQuerySchema = Type.Object(
  {
    dry_run: Type.Boolean({
      default: false,
      description: 'Validate against contract and current availability without placing the order.',
    }),
  },
  { additionalProperties: false },
);

const OrderItemSchema = Type.Object(
  {
    pzn: Type.String({ description: '8 digits.' }),
    quantity_ordered: Type.Integer(),
    quantity_confirmed: Type.Integer({
      description:
        'Sum of the portions that deliver (normal, network, backorder, special_procurement). In a dry run: what current availability would deliver within `delivery_preference` (a forecast).',
    }),
    delivery_preference: DeliveryPreferenceSchema,
    deliveries: Type.Array(DeliveryPortionSchema, {
      description: 'MSV3 `Anteile` (1 to 9; empty when not answered, e.g. in night mode).',
    }),
    substitution: SubstitutionSchema,
    answered: Type.Boolean({
      description: 'Additive: false when the answer has no line for this position (night mode).',
    }),
    merged_from: Type.Optional(
      Type.Array(Type.Integer(), {
        description: 'Additive, only for merged lines: indexes of the request items with this PZN.',
      }),
    ),
  },
  { additionalProperties: false },
);

const WarningSchema = Type.Object(
  {
    code: Type.Enum([
      'no_order_window_today',
      'closed_for_today',
      'no_order_window',
      'not_fully_available',
      'substituted',
    ]),
    message: Type.String(),
    item: Type.Optional(
      Type.Integer({ description: 'The request item concerned (first index of a merged line).' }),
    ),
  },
  { additionalProperties: false },
);

const NextCutoffSchema = Type.Union(
  [
    Type.Object(
      {
        at: Type.String({
          description: 'German local date-time `YYYY-MM-DDThh:mm:ss` of the cut-off (`Endezeit`).',
        }),
        special_day: Type.Boolean({ description: 'The date is a `Sondertag` with its own windows.' }),
        main_order_time: NullableString('Recommended main order time of that window, `HH:MM`, or null.'),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The next order cut-off from the contract (an order counts for it until 59 s after it).' },
);

const DELIVERY_EXAMPLE = {
  type: 'normal',
  quantity: 3,
  tour: 'Mittagstour',
  tour_id: 'T12',
  estimated_at: '2025-03-18T14:30:00',
  estimated_at_offset: '+01:00',
  reason: null,
  tour_deviation: false,
};

const ORDER_RESULT_EXAMPLE = {
  request_id: '9d7e6f50-1a2b-8c3d-8e9f-0a1b2c3d4e5f',
  status: 'confirmed',
  wholesaler: 'phoenix',
  dry_run: false,
  items: [
    {
      pzn: '04114918',
      quantity_ordered: 3,
      quantity_confirmed: 3,
      delivery_preference: 'normal',
      deliveries: [DELIVERY_EXAMPLE],
      substitution: null,
      answered: true,
    },
    {
      pzn: '01234562',
      quantity_ordered: 10,
      quantity_confirmed: 10,
      delivery_preference: 'backorder',
      deliveries: [
        { ...DELIVERY_EXAMPLE, quantity: 4 },
        {
          type: 'backorder',
          quantity: 6,
          tour: null,
          tour_id: null,
          estimated_at: null,
          estimated_at_offset: null,
          reason: 'out_of_stock',
          tour_deviation: false,
        },
      ],
      substitution: null,
      answered: true,
    },
  ],
  order_id: 'GW-4fJ8kQ2mN7pR1sT5vX9zA3',
  order_label: 'K1',
};

const DRY_RUN_EXAMPLE = {
  request_id: '5b0c2a9e-3f41-4d6b-9a7e-2c8d1e4f6a90',
  status: 'dry_run',
  wholesaler: 'phoenix',
  dry_run: true,
  items: [
    {
      pzn: '04114918',
      quantity_ordered: 3,
      quantity_confirmed: 3,
      delivery_preference: 'normal',
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
      answered: true,
    },
  ],
  checks: {
    order_type: 'normal',
    order_type_agreed: true,
    next_cutoff: { at: '2025-03-18T11:30:00', special_day: false, main_order_time: '11:00' },
    warnings: [],
  },
};

export const OrderResultSchema = Type.Object(
  {
    request_id: Type.String({
      format: 'uuid',
      description:
        "The MSV3 order id (`bestellung/@Id`, a UUID), the wholesaler's reference for this order; the same on every retry with the same Idempotency-Key. A dry run gets a fresh one. Not this HTTP request's id: that is the X-Request-Id header, which error bodies call `request_id`.",
    }),
    status: Type.Enum(['confirmed', 'dry_run', 'queued_night_mode']),
    wholesaler: Type.String(),
    dry_run: Type.Boolean(),
    items: Type.Array(OrderItemSchema, { description: 'One per position, in request order.' }),
    order_id: Type.Optional(
      Type.String({
        pattern: GATEWAY_ORDER_ID_PATTERN,
        description:
          'Additive: the gateway order id for `GET /v1/orders/{order_id}/status`; absent in a dry run.',
      }),
    ),
    order_label: Type.Optional(
      NullableString(
        'Additive: the `Auftragskennung` the wholesaler returned (it may replace ours), or null.',
      ),
    ),
    checks: Type.Optional(
      Type.Object(
        {
          order_type: Type.Literal('normal'),
          order_type_agreed: Type.Boolean({ description: 'NORMAL is always agreed in MSV3.' }),
          next_cutoff: NextCutoffSchema,
          warnings: Type.Array(WarningSchema, {
            description:
              'Findings that do not block an order: a closed or missing order window only moves the delivery, and availability changes by the minute.',
          }),
        },
        { additionalProperties: false, description: 'Additive, dry runs only: what was checked.' },
      ),
    ),
  },
  { additionalProperties: false, examples: [ORDER_RESULT_EXAMPLE, DRY_RUN_EXAMPLE] },
);

export const OrderStatusParamsSchema = Type.Object(
  {
    order_id: Type.String({
      maxLength: 64,
      examples: ['GW-4fJ8kQ2mN7pR1sT5vX9zA3'],
      description:
        'Gateway order id (`order_id` of the order result), `GW-` and 22 letters and digits; any other value is 404 `order_not_found`.',
    }),
  },
  { additionalProperties: false },
);

export const ORDER_STATUS_EXAMPLE = {
  order_id: 'GW-4fJ8kQ2mN7pR1sT5vX9zA3',
  status: 'available',
  items: [
    {
      pzn: '04114918',
      quantity_ordered: 3,
      delivery_preference: 'normal',
      quantity_confirmed: 3,
      deliveries: [DELIVERY_EXAMPLE],
      substitution: null,
    },
  ],
  wholesaler: 'phoenix',
  request_id: '9d7e6f50-1a2b-8c3d-8e9f-0a1b2c3d4e5f',
  placement_status: 'confirmed',
  rejection: null,
  order_label: 'K1',
};

export const OrderStatusSchema = Type.Object(
  {
    order_id: Type.String(),
    status: Type.Enum(['available', 'expired', 'unknown'], {
      description:
        'MSV3 `Status`: `available` (BestellantwortVerfuegbar: the answer is there), `expired` (BestellantwortNichtVerfuegbar: the order is known, its answer is not available, because it is too old or, in night mode, not ready yet), `unknown` (KennungUnbekannt).',
    }),
    items: Type.Array(
      Type.Object(
        {
          pzn: Type.String(),
          quantity_ordered: Type.Integer(),
          delivery_preference: DeliveryPreferenceSchema,
          quantity_confirmed: Type.Optional(
            Type.Integer({ description: 'Additive, when the answer is known.' }),
          ),
          deliveries: Type.Optional(
            Type.Array(DeliveryPortionSchema, { description: 'Additive, when the answer is known.' }),
          ),
          substitution: Type.Optional(SubstitutionSchema),
          merged_from: Type.Optional(Type.Array(Type.Integer())),
        },
        { additionalProperties: false },
      ),
    ),
    wholesaler: Type.String({ description: 'Additive.' }),
    request_id: Type.String({
      description:
        "Additive: the MSV3 order id (`bestellung/@Id`, a UUID). Not this HTTP request's id: that is the X-Request-Id header.",
    }),
    placement_status: Type.Enum(
      ['confirmed', 'queued_night_mode', 'rejected', 'outcome_unknown', 'not_placed'],
      {
        description:
          'Additive: what the gateway knows about the placement. `queued_night_mode` with status `expired` means the answer is not ready yet; `outcome_unknown` means an earlier attempt lost its answer (retry the order with its Idempotency-Key to settle it).',
      },
    ),
    rejection: Type.Union(
      [
        Type.Object(
          { error_code: Type.String(), user_text: Type.String(), technical_text: Type.String() },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          'Additive: the wholesaler’s texts when it rejected the order (`Auftragsfehler`), else null.',
      },
    ),
    order_label: NullableString('Additive: the returned `Auftragskennung`, or null.'),
  },
  {
    additionalProperties: false,
    examples: [ORDER_STATUS_EXAMPLE],
  },
);
