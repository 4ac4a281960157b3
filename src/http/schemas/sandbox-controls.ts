import { Type } from 'typebox';
import { WholesalerIdSchema } from './common.js';
import { DELIVERY_NOTICE_EXAMPLE, DeliveryNoticeSchema } from './deliveries.js';
import { ORDER_STATUS_EXAMPLE, OrderStatusSchema } from './orders.js';

/** Schemas of the test helpers (`routes/sandbox-controls.ts`, docs/sandbox.md "Test helpers"). */

export const WholesalerParamsSchema = Type.Object(
  { id: WholesalerIdSchema },
  { additionalProperties: false },
);

export const DeliverBodySchema = Type.Object(
  {
    shortages: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: half of every line (rounded up) is missing (`has_shortages`, and a `delivery.shortage` event).',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ shortages: true }] },
);

export const ProcessedOrderSchema = Type.Object(
  {
    order: OrderStatusSchema,
    deliveries: Type.Array(DeliveryNoticeSchema, {
      description: 'The delivery notices the processing created (each raised `delivery.received`).',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ order: ORDER_STATUS_EXAMPLE, deliveries: [DELIVERY_NOTICE_EXAMPLE] }],
  },
);

export const DeliveredOrderSchema = Type.Object(
  {
    order_id: Type.String(),
    wholesaler: Type.String(),
    deliveries: Type.Array(DeliveryNoticeSchema, { description: 'The new delivery notices, one per tour.' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        order_id: 'GW-4fJ8kQ2mN7pR1sT5vX9zA3',
        wholesaler: 'phoenix',
        deliveries: [DELIVERY_NOTICE_EXAMPLE],
      },
    ],
  },
);

export const SandboxStatusSchema = Type.Object(
  {
    wholesaler: Type.String(),
    status: Type.Enum(['up', 'down']),
    changed: Type.Boolean({
      description: 'false when the sandbox wholesaler was in that state already: no event then.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ wholesaler: 'phoenix', status: 'down', changed: true }],
  },
);
