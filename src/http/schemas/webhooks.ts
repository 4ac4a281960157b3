import { Type } from 'typebox';
import { EVENT_TYPES, EVERY } from '../../core/event-types.js';
import { XmlText } from './strings.js';

const IsoTime = (description: string) => Type.String({ format: 'date-time', description });
const NullableIsoTime = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

/** A wholesaler id, or `*` for every wholesaler the key can use (an addition to the spec's single id). */
export const WEBHOOK_ID_PATTERN = '^([a-z0-9][a-z0-9_-]{0,63}|\\*)$';

// The examples the OpenAPI document shows (schemas/webhooks-examples.test.ts checks them against the schemas).
const EXAMPLE_ID = 'whk_5mPq8RtV2wXy4ZaB6cDe9F';
const EXAMPLE_DELIVERY_ID = 'whd_7HjK2LmN4pQr6StU8vWx0Y';
const EXAMPLE_EVENT_ID = 'evt_3kTzW9qH2mN7pR1sT5vX9z';
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/cRhtlJtfM0=';
const WEBHOOK_EXAMPLE = {
  id: EXAMPLE_ID,
  url: 'https://pharmacy.example/hooks/msv3',
  wholesaler: 'phoenix',
  events: ['delivery.received', 'order.status_changed'],
  signing_secret: 'whsec_****fM0=',
  active: true,
  disabled_reason: null,
  livemode: false,
  previous_secret_expires_at: null,
  created_at: '2025-03-18T09:30:00.000Z',
  updated_at: '2025-03-18T09:30:00.000Z',
};
const ATTEMPT_RESULT_EXAMPLE = {
  delivery_id: EXAMPLE_DELIVERY_ID,
  event_id: EXAMPLE_EVENT_ID,
  attempt: 1,
  success: true,
  status_code: 200,
  duration_ms: 84,
  error_class: null,
  error: null,
  next_attempt_at: null,
  subscription_disabled: false,
};

const WebhookUrlSchema = XmlText({
  minLength: 1,
  maxLength: 2048,
  description:
    'Where events are POSTed. https for live keys; public addresses only (private, loopback, link-local, CGNAT, multicast, reserved and documentation ranges are refused unless the operator sets ALLOW_PRIVATE_ENDPOINTS, which also admits plain http to them). Checked again, with DNS, before every attempt.',
  examples: ['https://pharmacy.example/hooks/msv3'],
});

const EventListSchema = Type.Array(
  Type.Enum([...EVENT_TYPES, EVERY], {
    description: 'An event type, or `*` for every event type, those added later included.',
  }),
  {
    minItems: 1,
    maxItems: 16,
    description: 'Events to receive; duplicates are ignored.',
    examples: [['delivery.received', 'delivery.shortage'], ['*']],
  },
);

export const CreateWebhookSchema = Type.Object(
  {
    url: WebhookUrlSchema,
    wholesaler: Type.String({
      pattern: WEBHOOK_ID_PATTERN,
      description:
        'Wholesaler id whose events to receive (as in `GET /v1/wholesalers`), or `*` for every wholesaler this key can use, including those added later.',
      examples: ['phoenix', '*'],
    }),
    events: EventListSchema,
  },
  {
    additionalProperties: false,
    examples: [
      {
        url: 'https://pharmacy.example/hooks/msv3',
        wholesaler: 'phoenix',
        events: ['delivery.received', 'order.status_changed'],
      },
    ],
  },
);

export const UpdateWebhookSchema = Type.Object(
  {
    url: Type.Optional(WebhookUrlSchema),
    events: Type.Optional(EventListSchema),
    active: Type.Optional(
      Type.Boolean({
        description:
          '`true` re-enables a disabled subscription (and clears its failure record); `false` pauses it.',
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [
      { active: true },
      { url: 'https://pharmacy.example/hooks/msv3-new', events: ['delivery.shortage'] },
    ],
  },
);

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ description: '`whk_…`' }),
    url: Type.String(),
    wholesaler: Type.String(),
    events: Type.Array(Type.Enum([...EVENT_TYPES, EVERY]), {
      description: 'The event types it receives, or `["*"]` for every event type.',
    }),
    signing_secret: Type.String({
      description:
        '`whsec_` + base64 of 32 random bytes. In full only in the answers to creation and rotate-secret; elsewhere masked as `whsec_****` + its last 4 characters.',
    }),
    active: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the gateway disabled it (410 Gone, 5 days of failures) or `Disabled through the API.`',
    }),
    livemode: Type.Boolean(),
    previous_secret_expires_at: NullableIsoTime(
      'After a rotation: until when the previous secret still signs (alongside the new one).',
    ),
    created_at: IsoTime('When the subscription was created.'),
    updated_at: IsoTime('When it last changed.'),
  },
  { examples: [WEBHOOK_EXAMPLE] },
);

/** Creation and rotate-secret answer with the secret in full. */
export const RevealedWebhookSchema = Type.Object(WebhookSchema.properties, {
  examples: [{ ...WEBHOOK_EXAMPLE, signing_secret: EXAMPLE_SECRET }],
});

export const WebhookListSchema = Type.Object(
  {
    webhooks: Type.Array(WebhookSchema, {
      description:
        'Every subscription of the account in this mode (at most 50), oldest first; secrets masked.',
    }),
  },
  { examples: [{ webhooks: [WEBHOOK_EXAMPLE] }] },
);

const WebhookIdSchema = Type.String({ maxLength: 100, description: '`whk_…`', examples: [EXAMPLE_ID] });
export const WebhookParamsSchema = Type.Object({ id: WebhookIdSchema });
export const DeliveryParamsSchema = Type.Object({
  id: WebhookIdSchema,
  delivery_id: Type.String({ maxLength: 100, description: '`whd_…`', examples: [EXAMPLE_DELIVERY_ID] }),
});

export const AttemptSchema = Type.Object({
  id: Type.String({ description: '`wha_…`' }),
  attempt: Type.Integer({ description: '1 for the first attempt of the delivery.' }),
  trigger: Type.Enum(['schedule', 'manual', 'test'], {
    description: '`schedule`: the worker; `manual`: the retry endpoint; `test`: the test endpoint.',
  }),
  started_at: IsoTime('When the request was sent.'),
  duration_ms: Type.Integer(),
  success: Type.Boolean({ description: 'A 2xx within the timeout.' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], {
    description: "The receiver's HTTP status, if any.",
  }),
  error_class: Type.Union(
    [
      Type.Enum([
        'http_status',
        'redirect',
        'gone',
        'timeout',
        'connection_refused',
        'dns',
        'blocked',
        'tls',
        'network',
        'invalid_url',
      ]),
      Type.Null(),
    ],
    { description: 'Why it failed; null on success. `blocked`: the address is not allowed (SSRF rules).' },
  ),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'A short description. Response bodies are never stored.',
  }),
});

export const DeliverySchema = Type.Object({
  id: Type.String({ description: '`whd_…`: one per event and subscription (`X-MSV3-Delivery-Id`).' }),
  event_id: Type.String({ description: '`evt_…` (`webhook-id`, `X-MSV3-Request-Id`).' }),
  event_type: Type.String(),
  status: Type.Enum(['pending', 'paused', 'delivered', 'failed'], {
    description:
      '`pending`: an attempt is due or scheduled; `paused`: waiting while the subscription is disabled (resumes when it is re-enabled); `failed`: the retry schedule is used up (or 410).',
  }),
  attempt_count: Type.Integer(),
  next_attempt_at: NullableIsoTime('When the next automatic attempt is due.'),
  delivered_at: NullableIsoTime('When a 2xx was received.'),
  last_attempt_at: NullableIsoTime('When the last attempt ended.'),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: IsoTime('When the event was fanned out to this subscription.'),
  attempts: Type.Array(AttemptSchema, { description: 'Newest first; at most 25.' }),
});

export const DeliveryListQuerySchema = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    starting_after: Type.Optional(Type.String({ description: 'A delivery id from the previous page.' })),
    status: Type.Optional(Type.Enum(['pending', 'paused', 'delivered', 'failed'])),
  },
  { additionalProperties: false },
);

export const DeliveryListSchema = Type.Object(
  {
    deliveries: Type.Array(DeliverySchema, { description: 'Newest first.' }),
    has_more: Type.Boolean({ description: 'Pass the last id as `starting_after` for the next page.' }),
  },
  {
    examples: [
      {
        deliveries: [
          {
            id: EXAMPLE_DELIVERY_ID,
            event_id: EXAMPLE_EVENT_ID,
            event_type: 'delivery.received',
            status: 'pending',
            attempt_count: 2,
            next_attempt_at: '2025-03-18T10:05:00.000Z',
            delivered_at: null,
            last_attempt_at: '2025-03-18T09:35:00.412Z',
            last_status_code: 503,
            last_error: 'HTTP 503.',
            created_at: '2025-03-18T09:30:00.000Z',
            attempts: [
              {
                id: 'wha_2BcD4eFg6HiJ8kLm0NoP2q',
                attempt: 2,
                trigger: 'schedule',
                started_at: '2025-03-18T09:35:00.000Z',
                duration_ms: 412,
                success: false,
                status_code: 503,
                error_class: 'http_status',
                error: 'HTTP 503.',
              },
              {
                id: 'wha_1AbC3dEf5GhI7jKl9MnO1p',
                attempt: 1,
                trigger: 'schedule',
                started_at: '2025-03-18T09:30:00.100Z',
                duration_ms: 10000,
                success: false,
                status_code: null,
                error_class: 'timeout',
                error: 'No answer within 10000 ms.',
              },
            ],
          },
        ],
        has_more: false,
      },
    ],
  },
);

export const AttemptResultSchema = Type.Object(
  {
    delivery_id: Type.String(),
    event_id: Type.String(),
    attempt: Type.Integer(),
    success: Type.Boolean(),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Integer(),
    error_class: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    next_attempt_at: NullableIsoTime('For a pending delivery that failed again: its next automatic attempt.'),
    subscription_disabled: Type.Boolean({
      description: 'This attempt disabled the subscription (410 Gone).',
    }),
  },
  { examples: [ATTEMPT_RESULT_EXAMPLE] },
);
