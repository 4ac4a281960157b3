import { type Static, type TSchema, Type } from 'typebox';
import { EVENT_TYPES } from '../../core/event-types.js';
import type { WholesalerStatusData } from '../../webhooks/events/record.js';
import { DELIVERY_NOTICE_EXAMPLE, DeliveryNoticeSchema } from './deliveries.js';
import { ORDER_RECORD_EXAMPLE, OrderRecordSchema } from './order-records.js';
import { ORDER_STATUS_EXAMPLE, OrderStatusSchema } from './orders.js';

/**
 * Payload schemas of every webhook event, for the OpenAPI document (`webhooks`), each with an example.
 * `data` is the resource as the API returns it: the delivery notice of `GET /v1/deliveries`, the order
 * status of `GET /v1/orders/{order_id}/status` (plus `previous_status`) and the order record of
 * `GET /v1/orders/{order_id}`, with the very schemas those endpoints answer with.
 */

/** The order status as `GET /v1/orders/{order_id}/status` returns it, and the status before the change. */
const OrderStatusChangedDataSchema = Type.Object(
  {
    ...OrderStatusSchema.properties,
    previous_status: Type.Union([Type.Enum(['available', 'expired', 'unknown']), Type.Null()], {
      description: 'The status last reported for this order; null if none was known.',
    }),
  },
  {
    additionalProperties: false,
    description: 'The order status as `GET /v1/orders/{order_id}/status` returns it, plus `previous_status`.',
  },
);

const WholesalerStatusDataSchema = Type.Object({
  wholesaler: Type.String(),
  status: Type.Enum(['up', 'down']),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why, in a few words (`connection refused`, `HTTP 503`, `answers again`).',
  }),
  changed_at: Type.String({ description: 'ISO 8601, when the change was seen.' }),
});
// The schema documents the type the events module builds: a mismatch fails the type check.
const _sameData: [Static<typeof WholesalerStatusDataSchema>, WholesalerStatusData] extends [
  WholesalerStatusData,
  Static<typeof WholesalerStatusDataSchema>,
]
  ? true
  : never = true;
void _sameData;

const PingDataSchema = Type.Object({
  webhook_id: Type.String({ description: 'The subscription that was tested.' }),
  message: Type.String(),
});

const DATA_SCHEMAS: Record<(typeof EVENT_TYPES)[number] | 'ping', TSchema> = {
  'delivery.received': DeliveryNoticeSchema,
  'delivery.shortage': DeliveryNoticeSchema,
  'order.status_changed': OrderStatusChangedDataSchema,
  'order.fulfilled': OrderRecordSchema,
  'wholesaler.status_changed': WholesalerStatusDataSchema,
  ping: PingDataSchema,
};

const TRIGGERS: Record<keyof typeof DATA_SCHEMAS, string> = {
  'delivery.received':
    'A delivery notice the gateway has not seen before for this account and MSV3 customer: the first time it appears in `GET /v1/deliveries` or a `GET /v1/deliveries/history` lookup. `data` is the notice as `GET /v1/deliveries` returns it.',
  'delivery.shortage':
    'A newly seen delivery notice with at least one shortage (`has_shortages: true`); sent in addition to `delivery.received`. `data` is the notice.',
  'order.status_changed':
    'The status of an order placed through the gateway (`available`, `expired`, `unknown`) differs from the last one recorded, as learnt from its placement (`POST /v1/orders`) or a status query (`GET /v1/orders/{order_id}/status`). `data` is the order status as that endpoint returns it, with `previous_status`.',
  'order.fulfilled':
    'Every line of an order placed through the gateway has been delivered or reported short (`Fehlmenge`), as the delivery notes the gateway saw say (`GET /v1/deliveries`, a history lookup, or the sandbox’s own notes). Sent once per order. `data` is the order record as `GET /v1/orders/{order_id}` returns it, with the figures per line.',
  'wholesaler.status_changed':
    'A wholesaler endpoint in use went down or came back. Seen by the circuit breaker over real calls (open: down; closed again: up) and by a credential-free probe, every WHOLESALER_PROBE_INTERVAL_MS, of the endpoints called in the last hour (an MSV3 server that answers at all, 401 to the anonymous request included, is up). One state per wholesaler, mode and account: an event only on a real change. Sent to every account subscribed to that wholesaler in that mode (custom wholesalers: their owner only).',
  ping: 'Only sent by `POST /v1/webhooks/{id}/test`.',
};

const EXAMPLE_DATA: Record<keyof typeof DATA_SCHEMAS, unknown> = {
  'delivery.received': DELIVERY_NOTICE_EXAMPLE,
  'delivery.shortage': DELIVERY_NOTICE_EXAMPLE,
  'order.status_changed': { ...ORDER_STATUS_EXAMPLE, previous_status: 'expired' },
  'order.fulfilled': ORDER_RECORD_EXAMPLE,
  'wholesaler.status_changed': {
    wholesaler: 'phoenix',
    status: 'down',
    reason: 'unreachable: ECONNREFUSED',
    changed_at: '2025-03-18T09:15:02.417Z',
  },
  ping: { webhook_id: 'whk_7Hq2mN9pR4sT1vX8zA3bC5', message: 'Test event from msv3-gateway.' },
};

/** A complete example payload of one event type. */
export function eventExample(type: keyof typeof DATA_SCHEMAS): Record<string, unknown> {
  const perCustomer = type !== 'wholesaler.status_changed' && type !== 'ping';
  return {
    id: 'evt_3kTzW9qH2mN7pR1sT5vX9z',
    type,
    created_at: '2025-03-18T09:15:02.417Z',
    livemode: false,
    wholesaler: 'phoenix',
    customer_id: perCustomer ? '4711' : null,
    data: EXAMPLE_DATA[type],
  };
}

/** The envelope of one event type. */
export function eventSchema(type: keyof typeof DATA_SCHEMAS): TSchema {
  return Type.Object({
    id: Type.String({ description: '`evt_…`; the same on every retry (and in `webhook-id`).' }),
    type: Type.Literal(type),
    created_at: Type.String({ description: 'ISO 8601, when the event happened.' }),
    livemode: Type.Boolean({ description: 'false for pk_test_ (sandbox) accounts.' }),
    wholesaler: Type.String(),
    customer_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The MSV3 customer number at the wholesaler, where the event concerns one.',
    }),
    data: DATA_SCHEMAS[type],
  });
}

const HEADERS: [string, string][] = [
  [
    'X-MSV3-Signature',
    '`sha256=<hex HMAC-SHA256 of the raw body, keyed with the signing secret string>`; during a secret rotation one per secret, newest first, space-separated.',
  ],
  ['X-MSV3-Event', 'The event type.'],
  ['X-MSV3-Request-Id', 'The event id (`evt_…`), the same on every retry. Also sent as `X-MSV3-Event-Id`.'],
  ['X-MSV3-Delivery-Id', 'The delivery (`whd_…`): one per event and subscription.'],
  ['X-MSV3-Attempt', 'Attempt number, 1 for the first.'],
  ['webhook-id', 'Standard Webhooks: the event id, stable across retries.'],
  ['webhook-timestamp', 'Standard Webhooks: Unix seconds of this attempt.'],
  [
    'webhook-signature',
    'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed with the base64-decoded part of the secret after `whsec_`; several space-separated during a rotation.',
  ],
];

/** The OpenAPI 3.1 `webhooks` object: one entry per event, with the payload schema and headers. */
export function openApiWebhooks(): Record<string, unknown> {
  const plain = (schema: TSchema) => JSON.parse(JSON.stringify(schema)) as unknown;
  return Object.fromEntries(
    [...EVENT_TYPES, 'ping' as const].map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          tags: ['webhooks'],
          summary: `${type} event`,
          description: TRIGGERS[type],
          parameters: HEADERS.map(([name, description]) => ({
            name,
            in: 'header',
            required: true,
            description,
            schema: { type: 'string' },
          })),
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: plain(eventSchema(type)), example: eventExample(type) },
            },
          },
          responses: {
            '2XX': { description: 'Received. Answer within 10 seconds; anything else is retried.' },
            '410': { description: 'Gone: disables the subscription.' },
          },
        },
      },
    ]),
  );
}
