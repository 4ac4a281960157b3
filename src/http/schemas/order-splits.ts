import { Type } from 'typebox';
import { GATEWAY_ORDER_ID_PATTERN, SPLIT_ID_PATTERN } from '../../services/orders/ids.js';
import { PznSchema, WholesalerIdSchema } from './common.js';

/** Schemas of POST /v1/orders/split (docs/split-orders.md). */

/** More wholesalers than a pharmacy buys from is a mistake; each costs an availability call. */
const MAX_SPLIT_WHOLESALERS = 5;
/** One availability request per wholesaler holds at most 50 articles (as POST /v1/availability). */
const MAX_SPLIT_ITEMS = 50;

export const SplitQuerySchema = Type.Object(
  {
    dry_run: Type.Boolean({
      default: false,
      description: 'Ask availability and return the plan; places nothing and stores nothing.',
    }),
  },
  { additionalProperties: false },
);

export const SplitBodySchema = Type.Object(
  {
    wholesalers: Type.Array(WholesalerIdSchema, {
      minItems: 1,
      maxItems: MAX_SPLIT_WHOLESALERS,
      description:
        'The wholesalers in order of preference (the main one first); each needs a member in X-MSV3-Credentials. A wholesaler may occur once.',
    }),
    items: Type.Array(
      Type.Object(
        {
          pzn: PznSchema,
          quantity: Type.Integer({ minimum: 1, maximum: 99_999, description: 'Units wanted in total.' }),
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: MAX_SPLIT_ITEMS,
        description: 'A PZN may occur once. Each wholesaler gets a normal order (`K1`) of its lines.',
      },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesalers: ['phoenix', 'alliance', 'sanacorp'],
        items: [
          { pzn: '04114918', quantity: 2 },
          { pzn: '09990323', quantity: 10 },
        ],
      },
    ],
  },
);

const ErrorSummary = Type.Object(
  {
    error: Type.String({ description: 'The error kind (docs/errors.md).' }),
    message: Type.String(),
  },
  { additionalProperties: false },
);

const OUTCOMES = ['planned', 'confirmed', 'queued_night_mode', 'rejected', 'outcome_unknown', 'failed'];

const OutcomeSchema = Type.Enum(OUTCOMES, {
  description:
    '`planned` (dry run), `confirmed`, `queued_night_mode`, `rejected` (the wholesaler refused it: final) are answered; `outcome_unknown` (sent, answer not confirmed) and `failed` (not placed) make the split `incomplete`: retry with the same Idempotency-Key.',
});

const NullableOrderId = Type.Union([Type.String({ pattern: GATEWAY_ORDER_ID_PATTERN }), Type.Null()], {
  description: 'The gateway order id (`GET /v1/orders/{order_id}`); null in a dry run.',
});

const SplitOrderSchema = Type.Object(
  {
    wholesaler: Type.String(),
    order_id: NullableOrderId,
    request_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'The MSV3 order id (`Bestellung/@Id`), fixed in the plan before sending; null in a dry run.',
    }),
    status: OutcomeSchema,
    placement_status: Type.Union([Type.String(), Type.Null()], {
      description: 'As in POST /v1/orders (`confirmed`, `partially_confirmed`, …); null until answered.',
    }),
    error: Type.Union([ErrorSummary, Type.Null()], {
      description: 'Why this order is rejected, open or not placed; null otherwise.',
    }),
    items: Type.Array(
      Type.Object(
        {
          pzn: Type.String({ description: '8 digits.' }),
          quantity: Type.Integer({ description: 'Units ordered here.' }),
          quantity_confirmed: Type.Union([Type.Integer(), Type.Null()], {
            description: 'What the wholesaler confirmed; null until it answered.',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const SplitLineSchema = Type.Object(
  {
    pzn: Type.String({ description: '8 digits.' }),
    quantity: Type.Integer({ description: 'Units requested.' }),
    quantity_planned: Type.Integer({ description: 'Units given to wholesalers: at most `quantity`.' }),
    allocations: Type.Array(
      Type.Object(
        {
          wholesaler: Type.String(),
          quantity: Type.Integer(),
          order_id: NullableOrderId,
          status: OutcomeSchema,
          quantity_confirmed: Type.Union([Type.Integer(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
      { description: 'In order of preference; empty when no wholesaler delivers the article.' },
    ),
    quantity_undeliverable: Type.Integer({ description: 'Units no wholesaler that answered delivers.' }),
    undeliverable_reason: Type.Union([Type.Enum(['not_available', 'wholesaler_unavailable']), Type.Null()], {
      description:
        '`not_available`: every wholesaler answered and none delivers the rest; `wholesaler_unavailable`: some wholesaler could not be asked (see `wholesalers`); null when nothing is left over.',
    }),
  },
  { additionalProperties: false },
);

const PHOENIX_ORDER = 'GW-4ZbKq81sVd0QeX7mTn2LpA';
const ALLIANCE_ORDER = 'GW-9hRt3WcY6uNf1GkE5jBo8s';

const SPLIT_EXAMPLE = {
  split_id: 'SP-6f1c2a9e0b7d4e3f8a5c1d2e3f4a5b6c',
  status: 'complete',
  dry_run: false,
  wholesalers: [
    { wholesaler: 'phoenix', error: null },
    { wholesaler: 'alliance', error: null },
  ],
  orders: [
    {
      wholesaler: 'phoenix',
      order_id: PHOENIX_ORDER,
      request_id: '3b0f6f4e-2c1d-8a9b-9c0d-1e2f3a4b5c6d',
      status: 'confirmed',
      placement_status: 'confirmed',
      error: null,
      items: [
        { pzn: '04114918', quantity: 2, quantity_confirmed: 2 },
        { pzn: '09990323', quantity: 3, quantity_confirmed: 3 },
      ],
    },
    {
      wholesaler: 'alliance',
      order_id: ALLIANCE_ORDER,
      request_id: '7c8d9e0f-1a2b-8c3d-8e4f-5a6b7c8d9e0f',
      status: 'confirmed',
      placement_status: 'confirmed',
      error: null,
      items: [{ pzn: '09990323', quantity: 4, quantity_confirmed: 4 }],
    },
  ],
  lines: [
    {
      pzn: '04114918',
      quantity: 2,
      quantity_planned: 2,
      allocations: [
        {
          wholesaler: 'phoenix',
          quantity: 2,
          order_id: PHOENIX_ORDER,
          status: 'confirmed',
          quantity_confirmed: 2,
        },
      ],
      quantity_undeliverable: 0,
      undeliverable_reason: null,
    },
    {
      pzn: '09990323',
      quantity: 10,
      quantity_planned: 7,
      allocations: [
        {
          wholesaler: 'phoenix',
          quantity: 3,
          order_id: PHOENIX_ORDER,
          status: 'confirmed',
          quantity_confirmed: 3,
        },
        {
          wholesaler: 'alliance',
          quantity: 4,
          order_id: ALLIANCE_ORDER,
          status: 'confirmed',
          quantity_confirmed: 4,
        },
      ],
      quantity_undeliverable: 3,
      undeliverable_reason: 'not_available',
    },
  ],
};

export const SplitResultSchema = Type.Object(
  {
    split_id: Type.Union([Type.String({ pattern: SPLIT_ID_PATTERN }), Type.Null()], {
      description: 'Derived from the Idempotency-Key; null in a dry run and when nothing was deliverable.',
    }),
    status: Type.Enum(['dry_run', 'complete', 'incomplete'], {
      description:
        '`complete`: every wholesaler order is answered (taken or rejected). `incomplete`: at least one is open or not placed; the Idempotency-Key stays open, and a retry with it finishes only those.',
    }),
    dry_run: Type.Boolean(),
    wholesalers: Type.Array(
      Type.Object(
        {
          wholesaler: Type.String(),
          error: Type.Union([ErrorSummary, Type.Null()], {
            description: 'Why its availability could not be read: it got no lines. Null when it answered.',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'Every requested wholesaler, in order of preference.' },
    ),
    orders: Type.Array(SplitOrderSchema, {
      description: 'One order per wholesaler that got lines, in order of preference.',
    }),
    lines: Type.Array(SplitLineSchema, { description: 'One per requested item, in request order.' }),
  },
  { additionalProperties: false, examples: [SPLIT_EXAMPLE] },
);
