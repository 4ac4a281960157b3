import { Type } from 'typebox';
import { ORDER_TYPES } from '../../services/order-types.js';
import { GATEWAY_ORDER_ID_PATTERN } from '../../services/orders/ids.js';
import {
  DeliveryPortionSchema,
  NullableString,
  PznSchema,
  SubstitutionSchema,
  WholesalerIdSchema,
} from './common.js';
import {
  ANSWER_STATUS_DESCRIPTION,
  confirmedSubOrderExample,
  DELIVERY_EXAMPLE,
  PLACEMENT_STATUS_DESCRIPTION,
  SubOrderResultSchema,
} from './orders.js';

/**
 * Schemas of the order record (`GET /v1/orders/{order_id}`, also the `data` of `order.fulfilled`) and
 * the listing (`GET /v1/orders`), docs/orders.md "The order record".
 */

const PLACEMENT_STATUSES = [
  'confirmed',
  'partially_confirmed',
  'queued_night_mode',
  'rejected',
  'outcome_unknown',
  'not_placed',
] as const;

const Iso = (description: string) => Type.String({ format: 'date-time', description });

const DeliveredPartSchema = Type.Object(
  {
    tracking_number: Type.String({ description: 'The delivery note (`Lieferscheinnummer`).' }),
    quantity: Type.Integer(),
    pzn: Type.String({ description: 'The PZN the note printed (a substitute, when one was delivered).' }),
    batch: NullableString('`Charge`.'),
    expiry_date: NullableString('`Verfalldatum`, `YYYY-MM-DD`.'),
    parcel_number: NullableString('`Packstuecknummer`: the tote or parcel.'),
    date: Type.String({ description: 'The note’s date, `YYYY-MM-DD`.' }),
    inferred: Type.Boolean({
      description: 'True when the note named no sub-order and the part was matched by label, tour and date.',
    }),
  },
  { additionalProperties: false },
);

const ShortPartSchema = Type.Object(
  {
    tracking_number: Type.String(),
    quantity: Type.Integer(),
    date: Type.String(),
    inferred: Type.Boolean(),
  },
  { additionalProperties: false },
);

const RecordItemSchema = Type.Object(
  {
    pzn: Type.String({ description: '8 digits.' }),
    quantity_ordered: Type.Integer(),
    quantity_confirmed: Type.Union([Type.Integer(), Type.Null()], {
      description: 'What the wholesaler confirmed (the parts that deliver); null until it answered.',
    }),
    delivery_preference: Type.Enum(['normal', 'backorder', 'grouped', 'disposition']),
    deliveries: Type.Array(DeliveryPortionSchema, {
      description: 'The answer’s planned parts (MSV3 `Anteile`).',
    }),
    substitution: SubstitutionSchema,
    answered: Type.Boolean(),
    merged_from: Type.Optional(Type.Array(Type.Integer())),
    quantity_delivered: Type.Integer({ description: 'Delivered according to the delivery notes seen.' }),
    quantity_short: Type.Integer({ description: 'Reported short (`Fehlmenge`) by the delivery notes seen.' }),
    tracking_numbers: Type.Array(Type.String(), {
      description: 'The delivery notes that carried this line.',
    }),
    delivered: Type.Array(DeliveredPartSchema, {
      description: 'Each delivered part, with batch and expiry.',
    }),
    shortages: Type.Array(ShortPartSchema),
  },
  { additionalProperties: false },
);

const RecordSubOrderSchema = Type.Object(
  { ...SubOrderResultSchema.properties, items: Type.Array(RecordItemSchema) },
  { additionalProperties: false },
);

const FulfilmentSchema = Type.Object(
  {
    status: Type.Enum(['waiting', 'open', 'fulfilled', 'none'], {
      description:
        '`waiting`: no answer yet (night mode, an open outcome); `open`: answered, goods outstanding; `fulfilled`: every line delivered or reported short; `none`: nothing to deliver (rejected, not placed).',
    }),
    fulfilled_at: Type.Union([Iso('When the last line was delivered or reported short.'), Type.Null()]),
    quantity_ordered: Type.Integer(),
    quantity_confirmed: Type.Integer(),
    quantity_delivered: Type.Integer(),
    quantity_short: Type.Integer(),
  },
  { additionalProperties: false, description: 'What arrived, summed over every line.' },
);

const recordProperties = {
  order_id: Type.String({ pattern: GATEWAY_ORDER_ID_PATTERN }),
  request_id: Type.String({ format: 'uuid', description: 'The MSV3 order id (`bestellung/@Id`).' }),
  wholesaler: Type.String(),
  created_at: Iso('When the order was first stored.'),
  updated_at: Iso('Its last change.'),
  placement_status: Type.Enum([...PLACEMENT_STATUSES], { description: PLACEMENT_STATUS_DESCRIPTION }),
  status: Type.Union([Type.Enum(['available', 'expired', 'unknown']), Type.Null()], {
    description: 'The last MSV3 status the gateway learnt (placement or status query); null if none.',
  }),
  answer_status: Type.Union([Type.Enum(['available', 'pending', 'expired', 'unknown']), Type.Null()], {
    description: ANSWER_STATUS_DESCRIPTION,
  }),
  fulfilment: FulfilmentSchema,
};

const RECORD_EXAMPLE = {
  order_id: 'GW-4fJ8kQ2mN7pR1sT5vX9zA3',
  request_id: '9d7e6f50-1a2b-8c3d-8e9f-0a1b2c3d4e5f',
  wholesaler: 'phoenix',
  created_at: '2025-03-18T08:02:11.417Z',
  updated_at: '2025-03-18T12:40:03.120Z',
  placement_status: 'confirmed',
  status: 'available',
  answer_status: 'available',
  fulfilment: {
    status: 'fulfilled',
    fulfilled_at: '2025-03-18T12:40:03.120Z',
    quantity_ordered: 3,
    quantity_confirmed: 3,
    quantity_delivered: 2,
    quantity_short: 1,
  },
  sub_orders: [
    confirmedSubOrderExample([
      {
        pzn: '04114918',
        quantity_ordered: 3,
        quantity_confirmed: 3,
        delivery_preference: 'normal',
        deliveries: [DELIVERY_EXAMPLE],
        substitution: null,
        answered: true,
        quantity_delivered: 2,
        quantity_short: 1,
        tracking_numbers: ['LS20250318000042'],
        delivered: [
          {
            tracking_number: 'LS20250318000042',
            quantity: 2,
            pzn: '04114918',
            batch: 'CH-A1',
            expiry_date: '2027-11-30',
            parcel_number: 'WANNE000017',
            date: '2025-03-18',
            inferred: false,
          },
        ],
        shortages: [
          { tracking_number: 'LS20250318000042', quantity: 1, date: '2025-03-18', inferred: false },
        ],
      },
    ]),
  ],
  history: [{ at: '2025-03-18T08:02:11.530Z', placement_status: 'confirmed', status: 'available' }],
};

export const OrderRecordSchema = Type.Object(
  {
    ...recordProperties,
    sub_orders: Type.Array(RecordSubOrderSchema, {
      description: 'The request and the answer per sub-order.',
    }),
    history: Type.Array(
      Type.Object(
        {
          at: Iso('When the change was stored.'),
          placement_status: Type.Enum([...PLACEMENT_STATUSES]),
          status: Type.Union([Type.Enum(['available', 'expired', 'unknown']), Type.Null()]),
        },
        { additionalProperties: false },
      ),
      { description: 'Every change of placement status or MSV3 status, oldest first.' },
    ),
  },
  { additionalProperties: false, examples: [RECORD_EXAMPLE] },
);
export const ORDER_RECORD_EXAMPLE = RECORD_EXAMPLE;

export const OrderRecordParamsSchema = Type.Object(
  {
    order_id: Type.String({
      maxLength: 64,
      examples: ['GW-4fJ8kQ2mN7pR1sT5vX9zA3'],
      description:
        'Gateway order id (`order_id` of the order result); any other value is 404 `order_not_found`.',
    }),
  },
  { additionalProperties: false },
);

export const OrderListQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Orders per page, 1 to 100.' }),
    ),
    starting_after: Type.Optional(
      Type.String({
        pattern: GATEWAY_ORDER_ID_PATTERN,
        description:
          'The `order_id` of the last order of the previous page: the page continues with older orders. An id that is not one of this key’s orders gives an empty page.',
      }),
    ),
    wholesaler: Type.Optional({ ...WholesalerIdSchema, description: 'Only orders with this wholesaler id.' }),
    placement_status: Type.Optional(
      Type.Enum([...PLACEMENT_STATUSES], { description: 'Only orders with this placement status.' }),
    ),
    created_after: Type.Optional(Iso('Only orders created at or after this time (inclusive).')),
    created_before: Type.Optional(Iso('Only orders created before this time (exclusive).')),
    pzn: Type.Optional({ ...PznSchema, description: 'Only orders with a line of this PZN.' }),
  },
  { additionalProperties: false },
);

const OrderSummarySchema = Type.Object(
  {
    ...recordProperties,
    sub_orders: Type.Array(
      Type.Object(
        {
          sub_order_id: Type.String({ format: 'uuid' }),
          order_type: Type.Enum([...ORDER_TYPES]),
          requested_label: Type.String(),
          order_label: NullableString('The returned `Auftragskennung`, null before the answer.'),
          container_id: NullableString('`GebindeId` of a shipping sub-order.'),
          status: SubOrderResultSchema.properties.status,
          error: SubOrderResultSchema.properties.error,
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'An order of the listing: the record without items and history.',
  },
);

export const OrderListSchema = Type.Object(
  {
    orders: Type.Array(OrderSummarySchema, { description: 'Newest first.' }),
    has_more: Type.Boolean({
      description: 'Pass the last `order_id` as `starting_after` for the next page.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        orders: [
          {
            ...RECORD_EXAMPLE,
            history: undefined,
            sub_orders: RECORD_EXAMPLE.sub_orders.map(({ items: _items, ...sub }) => sub),
          },
        ].map(({ history: _history, ...order }) => order),
        has_more: false,
      },
    ],
  },
);
