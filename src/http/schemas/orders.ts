import { Type } from 'typebox';
import { ORDER_TYPES } from '../../services/order-types.js';
import { GATEWAY_ORDER_ID_PATTERN } from '../../services/orders/ids.js';
import { DELIVERY_PREFERENCES } from '../../services/orders/request.js';
import {
  DeliveryPortionSchema,
  NullableString,
  PznSchema,
  SubstitutionSchema,
  WholesalerIdSchema,
} from './common.js';
import { PRINTABLE_ID_PATTERN } from './patterns.js';

/**
 * Schemas of POST /v1/orders and GET /v1/orders/{order_id}/status (docs/msv3.md "Orders", "Order status")
 * with examples.
 */

const PREFERENCE_DESCRIPTION =
  'MSV3 `Liefervorgabe`, how far the wholesaler may go: `normal` (Normal: regular stock only), `grouped` (MaxVerbund: also a partner warehouse), `backorder` (MaxNachlieferung: also back-order the rest), `disposition` (MaxDispo: also special procurement).';

const DeliveryPreferenceSchema = Type.Enum([...DELIVERY_PREFERENCES], {
  description: PREFERENCE_DESCRIPTION,
});

const ItemInputSchema = Type.Object(
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
);

const ORDER_TYPE_DESCRIPTION =
  'MSV3 `Auftragsart`: `normal` (NORMAL), `batch` (STAPEL, replenishment), `special` (SONDER), `shipping` (VERSAND, for mail-order: needs `container_id`). Types other than normal must be agreed in the contract (`GET /v1/contracts`), else 422 `order_type_not_agreed` before anything is sent.';
const LABEL_DESCRIPTION =
  "MSV3 `Auftragskennung`, printed on totes and delivery notes: 1 to 20 of `A-Z 0-9 + - _`. Without it, the type's default label (`K1` for normal orders, `STAPEL`, `SONDER`, `VERSAND`). The contract limits the labels of the client's own choosing per type (`MaxAnzahlFreieAuftragskennungen`: 422 `order_labels_exceeded`); the wholesaler may replace a label in its answer.";
const CONTAINER_DESCRIPTION =
  'MSV3 `GebindeId`, the container a shipping order travels in: required for `shipping`, refused for any other type. 1 to 20 of `A-Z 0-9 + - _`.';

const itemsSchema = (maxPositions: number, description: string) =>
  Type.Array(ItemInputSchema, { minItems: 1, maxItems: maxPositions, description });

const ITEMS_RULE =
  'Lines repeating a PZN with the same delivery_preference are merged into one position (quantities summed); with different preferences the request is refused.';

/**
 * The body of `POST /v1/orders`. `maxPositions` is ORDER_MAX_POSITIONS: no list may be longer, and the
 * positions of all sub-orders together may not be more (checked by the order service).
 */
export function orderBodySchema(maxPositions: number) {
  const limit = `Positions across all sub-orders: at most ${maxPositions} (ORDER_MAX_POSITIONS) after merging.`;
  return Type.Object(
    {
      wholesaler: WholesalerIdSchema,
      items: Type.Optional(
        itemsSchema(
          maxPositions,
          `The order as one sub-order: 1 to ${maxPositions} positions. Send \`items\` or \`sub_orders\`, exactly one. ${ITEMS_RULE}`,
        ),
      ),
      order_type: Type.Optional(
        Type.Enum([...ORDER_TYPES], {
          description: `With \`items\`; normal when absent. ${ORDER_TYPE_DESCRIPTION}`,
        }),
      ),
      order_label: Type.Optional(
        Type.String({ pattern: PRINTABLE_ID_PATTERN, description: `With \`items\`. ${LABEL_DESCRIPTION}` }),
      ),
      container_id: Type.Optional(
        Type.String({
          pattern: PRINTABLE_ID_PATTERN,
          description: `With \`items\`. ${CONTAINER_DESCRIPTION}`,
        }),
      ),
      sub_orders: Type.Optional(
        Type.Array(
          Type.Object(
            {
              order_type: Type.Optional(
                Type.Enum([...ORDER_TYPES], { default: 'normal', description: ORDER_TYPE_DESCRIPTION }),
              ),
              order_label: Type.Optional(
                Type.String({ pattern: PRINTABLE_ID_PATTERN, description: LABEL_DESCRIPTION }),
              ),
              container_id: Type.Optional(
                Type.String({ pattern: PRINTABLE_ID_PATTERN, description: CONTAINER_DESCRIPTION }),
              ),
              items: itemsSchema(
                maxPositions,
                `1 to ${maxPositions} positions of this sub-order. ${ITEMS_RULE}`,
              ),
            },
            { additionalProperties: false },
          ),
          {
            minItems: 1,
            maxItems: maxPositions,
            description: `The order as several sub-orders (MSV3 \`Auftraege\`), sent as one MSV3 \`Bestellung\`: each with its own type, label, container and items; a PZN at most once per sub-order (repeats merged), any number of times across them. ${limit}`,
          },
        ),
      ),
    },
    {
      additionalProperties: false,
      description: `Exactly one of \`items\` (one sub-order, with \`order_type\`, \`order_label\`, \`container_id\` beside it) and \`sub_orders\`.`,
      examples: [
        {
          wholesaler: 'phoenix',
          items: [
            { pzn: '04114918', quantity: 3 },
            { pzn: '1234562', quantity: 10, delivery_preference: 'backorder' },
          ],
        },
        {
          wholesaler: 'phoenix',
          sub_orders: [
            { order_type: 'normal', order_label: 'K1', items: [{ pzn: '04114918', quantity: 3 }] },
            { order_type: 'batch', order_label: 'LAGER', items: [{ pzn: '1234562', quantity: 20 }] },
            { order_type: 'special', items: [{ pzn: '04114918', quantity: 1 }] },
          ],
        },
        {
          wholesaler: 'phoenix',
          order_type: 'shipping',
          container_id: 'KISTE7',
          items: [{ pzn: '04114918', quantity: 2 }],
        },
      ],
    },
  );
}

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
      Type.Integer({
        description: 'The request item concerned (first index of a merged line), within its sub-order.',
      }),
    ),
    sub_order: Type.Optional(
      Type.Integer({ description: 'The sub-order of that item, when the order was sent as `sub_orders`.' }),
    ),
  },
  { additionalProperties: false },
);

const RejectionSchema = Type.Object(
  { error_code: Type.String(), user_text: Type.String(), technical_text: Type.String() },
  { additionalProperties: false, description: 'The wholesaler’s texts of an `Auftragsfehler`.' },
);

export const PLACEMENT_STATUS_DESCRIPTION =
  '`confirmed` (every sub-order taken), `partially_confirmed` (the wholesaler refused some sub-orders, see `sub_orders[].error`, and took the others), `queued_night_mode` (taken in night mode, its answer not ready yet), `rejected` (every sub-order refused), `outcome_unknown` (an attempt lost its answer: retry with the Idempotency-Key to settle it), `not_placed` (the wholesaler did not take it).';

const PlacementStatusSchema = Type.Enum(
  ['confirmed', 'partially_confirmed', 'queued_night_mode', 'rejected', 'outcome_unknown', 'not_placed'],
  { description: PLACEMENT_STATUS_DESCRIPTION },
);

export const ANSWER_STATUS_DESCRIPTION =
  'Additive: where the wholesaler’s answer stands. `available`; `pending`: a night-mode order the wholesaler has taken and not processed yet: waiting, not lost (MSV3 says BestellantwortNichtVerfuegbar, so `status` is `expired`); `expired`: the answer is gone (too old); `unknown`: the wholesaler does not know the order id. Null while no answer was asked for.';

export const SubOrderResultSchema = Type.Object(
  {
    sub_order_id: Type.String({
      format: 'uuid',
      description:
        'MSV3 `BestellungAuftrag/@Id`, derived from the order id: the same on every retry. Delivery notices name it as `sub_order_id`.',
    }),
    order_type: Type.Enum([...ORDER_TYPES]),
    requested_label: Type.String({ description: 'The `Auftragskennung` sent.' }),
    order_label: NullableString(
      'The `Auftragskennung` the wholesaler returned (it may replace the one sent); null before its answer.',
    ),
    container_id: NullableString('`GebindeId` of a shipping sub-order, else null.'),
    status: Type.Enum(['confirmed', 'rejected', 'pending', 'unanswered', 'dry_run'], {
      description:
        '`confirmed`; `rejected` (its `Auftragsfehler` in `error`; the other sub-orders stand); `pending` (no answer yet: night mode, or an open outcome); `unanswered` (the wholesaler’s answer left it out); `dry_run`.',
    }),
    error: Type.Union([RejectionSchema, Type.Null()]),
    items: Type.Array(OrderItemSchema, { description: 'Its positions, in request order.' }),
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

export const DELIVERY_EXAMPLE = {
  type: 'normal',
  quantity: 3,
  tour: 'Mittagstour',
  tour_id: 'T12',
  estimated_at: '2025-03-18T14:30:00',
  estimated_at_offset: '+01:00',
  reason: null,
  tour_deviation: false,
};

const ORDER_ITEMS_EXAMPLE = [
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
];

const SUB_ORDER_ID_EXAMPLE = '3f2b1c0d-9e8f-8a7b-9c6d-5e4f3a2b1c0d';

/** A confirmed normal sub-order `K1` with these items, for the examples of answers that list sub-orders. */
export const confirmedSubOrderExample = <Item>(items: Item[]) => ({
  sub_order_id: SUB_ORDER_ID_EXAMPLE,
  order_type: 'normal',
  requested_label: 'K1',
  order_label: 'K1',
  container_id: null,
  status: 'confirmed',
  error: null,
  items,
});

const ORDER_RESULT_EXAMPLE = {
  request_id: '9d7e6f50-1a2b-8c3d-8e9f-0a1b2c3d4e5f',
  status: 'confirmed',
  wholesaler: 'phoenix',
  dry_run: false,
  items: ORDER_ITEMS_EXAMPLE,
  order_id: 'GW-4fJ8kQ2mN7pR1sT5vX9zA3',
  order_label: 'K1',
  placement_status: 'confirmed',
  sub_orders: [confirmedSubOrderExample(ORDER_ITEMS_EXAMPLE)],
};

const DRY_RUN_ITEMS_EXAMPLE = [
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
];

const DRY_RUN_EXAMPLE = {
  request_id: '5b0c2a9e-3f41-4d6b-9a7e-2c8d1e4f6a90',
  status: 'dry_run',
  wholesaler: 'phoenix',
  dry_run: true,
  items: DRY_RUN_ITEMS_EXAMPLE,
  sub_orders: [
    {
      sub_order_id: '7a6b5c4d-3e2f-8a1b-8c0d-9e8f7a6b5c4d',
      order_type: 'normal',
      requested_label: 'K1',
      order_label: null,
      container_id: null,
      status: 'dry_run',
      error: null,
      items: DRY_RUN_ITEMS_EXAMPLE,
    },
  ],
  checks: {
    order_type: 'normal',
    order_type_agreed: true,
    next_cutoff: { at: '2025-03-18T11:30:00', special_day: false, main_order_time: '11:00' },
    warnings: [],
    sub_orders: [
      {
        order_type: 'normal',
        order_type_agreed: true,
        next_cutoff: { at: '2025-03-18T11:30:00', special_day: false, main_order_time: '11:00' },
      },
    ],
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
          'Additive: the gateway order id for `GET /v1/orders/{order_id}` (the stored record) and `GET /v1/orders/{order_id}/status`; absent in a dry run.',
      }),
    ),
    order_label: Type.Optional(
      NullableString(
        'Additive: the `Auftragskennung` the wholesaler returned for the first sub-order (it may replace ours), or null.',
      ),
    ),
    placement_status: Type.Optional(PlacementStatusSchema),
    sub_orders: Type.Array(SubOrderResultSchema, {
      description: 'Additive: one per sub-order, in request order (one for the `items` form).',
    }),
    checks: Type.Optional(
      Type.Object(
        {
          order_type: Type.Enum([...ORDER_TYPES], { description: 'The first sub-order’s type.' }),
          order_type_agreed: Type.Boolean({
            description:
              'Always true in a 200: a type the contract does not agree is 422 `order_type_not_agreed`.',
          }),
          next_cutoff: NextCutoffSchema,
          sub_orders: Type.Array(
            Type.Object(
              {
                order_type: Type.Enum([...ORDER_TYPES]),
                order_type_agreed: Type.Boolean(),
                next_cutoff: NextCutoffSchema,
              },
              { additionalProperties: false },
            ),
            { description: 'Per sub-order; MSV3 order windows are the same for every order type.' },
          ),
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
  answer_status: 'available',
  rejection: null,
  order_label: 'K1',
  sub_orders: [confirmedSubOrderExample([ORDER_ITEMS_EXAMPLE[0]!])],
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
    placement_status: PlacementStatusSchema,
    answer_status: Type.Union([Type.Enum(['available', 'pending', 'expired', 'unknown']), Type.Null()], {
      description: ANSWER_STATUS_DESCRIPTION,
    }),
    rejection: Type.Union([RejectionSchema, Type.Null()], {
      description:
        'Additive: the first refused sub-order’s texts (`Auftragsfehler`), else null; each sub-order’s in `sub_orders[].error`.',
    }),
    order_label: NullableString('Additive: the first sub-order’s returned `Auftragskennung`, or null.'),
    sub_orders: Type.Array(SubOrderResultSchema, { description: 'Additive: one per sub-order.' }),
  },
  {
    additionalProperties: false,
    examples: [ORDER_STATUS_EXAMPLE],
  },
);
