import { type Static, type TSchema, Type } from 'typebox';
import { EVENT_TYPES } from './event-types.js';

/**
 * Payload schemas of every webhook event, for the OpenAPI document (`webhooks`). The `data` schemas are
 * the resources as the API returns them; the endpoint modules may replace them with their own response
 * schemas (keep the event names and the envelope). Objects allow additive fields.
 */

const DeliveryPreference = Type.Enum(['normal', 'backorder', 'grouped', 'disposition']);

/** SPEC 2.6. */
export const DeliveryNoticeDataSchema = Type.Object(
  {
    tracking_number: Type.String({ description: 'Identifies the notice; used for confirmation.' }),
    barcode: Type.String(),
    order_type: Type.String({ description: '`normal`, `batch`, `special`, `shipping`.' }),
    date: Type.String({ description: 'YYYY-MM-DD' }),
    has_shortages: Type.Boolean(),
    items: Type.Array(
      Type.Object({
        pzn: Type.String(),
        quantity_delivered: Type.Integer(),
        shortages: Type.Integer(),
      }),
    ),
  },
  { description: 'The delivery notice as `GET /v1/deliveries` returns it.' },
);

/** SPEC 2.5, plus the status before the change. */
export const OrderStatusChangedDataSchema = Type.Object(
  {
    order_id: Type.String({ description: 'Gateway order id, `GW-…`.' }),
    status: Type.Enum(['available', 'expired', 'unknown']),
    previous_status: Type.Union([Type.Enum(['available', 'expired', 'unknown']), Type.Null()], {
      description: 'The status last reported for this order; null if none was known.',
    }),
    items: Type.Array(
      Type.Object({
        pzn: Type.String(),
        quantity_ordered: Type.Integer(),
        delivery_preference: DeliveryPreference,
      }),
    ),
  },
  { description: 'The order status as `GET /v1/orders/{order_id}/status` returns it.' },
);

export const WholesalerStatusDataSchema = Type.Object({
  wholesaler: Type.String(),
  status: Type.Enum(['up', 'down']),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why, in a few words (`connection refused`, `HTTP 503`, `answers again`).',
  }),
  changed_at: Type.String({ description: 'ISO 8601, when the change was seen.' }),
});
export type WholesalerStatusData = Static<typeof WholesalerStatusDataSchema>;

export const PingDataSchema = Type.Object({
  webhook_id: Type.String({ description: 'The subscription that was tested.' }),
  message: Type.String(),
});

const DATA_SCHEMAS: Record<(typeof EVENT_TYPES)[number] | 'ping', TSchema> = {
  'delivery.received': DeliveryNoticeDataSchema,
  'delivery.shortage': DeliveryNoticeDataSchema,
  'order.status_changed': OrderStatusChangedDataSchema,
  'wholesaler.status_changed': WholesalerStatusDataSchema,
  ping: PingDataSchema,
};

const TRIGGERS: Record<keyof typeof DATA_SCHEMAS, string> = {
  'delivery.received':
    'A delivery notice the gateway has not seen before: the first time it appears for the account (while reading unconfirmed notices or the history). `data` is the notice.',
  'delivery.shortage':
    'A newly seen delivery notice with at least one shortage (`has_shortages: true`); sent in addition to `delivery.received`. `data` is the notice.',
  'order.status_changed':
    'The status of an order placed through the gateway changed (`available`, `expired`, `unknown`), as seen when it was read. `data` is the order status with `previous_status`.',
  'wholesaler.status_changed':
    "A wholesaler endpoint in use went down or came back, as seen by the gateway's credential-free probes and its circuit breaker. Sent to every account subscribed to that wholesaler in that mode (custom wholesalers: their owner only).",
  ping: 'Only sent by `POST /v1/webhooks/{id}/test`.',
};

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
            content: { 'application/json': { schema: plain(eventSchema(type)) } },
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
