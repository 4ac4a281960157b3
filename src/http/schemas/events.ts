import { Type } from 'typebox';
import { EVENT_TYPES } from '../../core/event-types.js';
import { WholesalerIdSchema } from './common.js';
import { eventExample, eventSchema } from './webhook-events.js';

/** `evt_` and the random part (22 base62 characters today; up to 64 accepted). */
export const EVENT_ID_PATTERN = '^evt_[A-Za-z0-9]{1,64}$';

const EventIdSchema = (description: string) =>
  Type.String({ pattern: EVENT_ID_PATTERN, description, examples: ['evt_3kTzW9qH2mN7pR1sT5vX9z'] });

const Timestamp = (description: string) =>
  Type.String({ format: 'date-time', description, examples: ['2025-03-18T00:00:00Z'] });

export const EventListQuerySchema = Type.Object(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 20,
      description: 'Events per page, 1 to 100 (default 20).',
    }),
    starting_after: Type.Optional(
      EventIdSchema(
        'The `id` of the last event of the previous page: the page continues with the events older than it. An id that is not one of this key’s events (or is past the retention) gives an empty page.',
      ),
    ),
    type: Type.Optional(
      Type.Enum([...EVENT_TYPES], { description: 'Only events of this type (one type per request).' }),
    ),
    wholesaler: Type.Optional({
      ...WholesalerIdSchema,
      description: 'Only events of this wholesaler id, as the events name it (`wholesaler`).',
    }),
    created_after: Type.Optional(
      Timestamp('Only events created at or after this time (inclusive), ISO 8601 with a time zone.'),
    ),
    created_before: Type.Optional(
      Timestamp('Only events created before this time (exclusive), ISO 8601 with a time zone.'),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ limit: 20, type: 'delivery.received', wholesaler: 'phoenix' }],
  },
);

export const EventParamsSchema = Type.Object({
  id: EventIdSchema('The event id (`evt_…`, also the `webhook-id` of its deliveries).'),
});

/** One event: the very body its webhook deliveries carry (`webhooks` in this document). */
export const EventSchema = Type.Union(
  EVENT_TYPES.map((type) => eventSchema(type)),
  {
    description:
      'The event exactly as webhooks send it (the body of every delivery): `id`, `type`, `created_at`, `livemode`, `wholesaler`, `customer_id` and `data`.',
    examples: [eventExample('delivery.received')],
  },
);

export const EventListSchema = Type.Object(
  {
    events: Type.Array(EventSchema, { description: 'Newest first.' }),
    has_more: Type.Boolean({ description: 'Pass the last id as `starting_after` for the next page.' }),
  },
  {
    examples: [
      {
        events: [
          { ...eventExample('order.status_changed'), id: 'evt_8pQ2rS4tU6vW8xY0zA1bC3' },
          eventExample('delivery.received'),
        ],
        has_more: false,
      },
    ],
  },
);
