import type { FastifyRequest } from 'fastify';
import type { Tenant } from '../../core/caller.js';
import { ApiError } from '../../core/errors.js';
import { findEventPayload, listEvents } from '../../store/webhook-events.js';
import type { AppDeps } from '../app-deps.js';
import { routeErrors } from '../route-errors.js';
import { EventListQuerySchema, EventListSchema, EventParamsSchema, EventSchema } from '../schemas/events.js';
import type { GatewayApp } from '../types.js';

const tags = ['events'];
const tenantOf = (request: FastifyRequest): Tenant => ({
  accountId: request.auth.accountId,
  mode: request.auth.mode,
});

const LIST_ERRORS = routeErrors([]);
const ONE_ERRORS = routeErrors(['resource_not_found'], {
  resource_not_found: 'no such event for this key’s account and mode, or it is past the retention',
});

const RETENTION =
  'Events are kept as long as the webhook history: WEBHOOK_RETENTION_DAYS (events still being delivered a little longer).';

/**
 * Epoch milliseconds of an RFC 3339 date-time the schema accepted. A leap second (`…:60`), which the
 * format admits and `Date.parse` does not, counts as the first moment of the next minute.
 */
function instant(text: string): number {
  const parsed = Date.parse(text);
  if (!Number.isNaN(parsed)) return parsed;
  return Date.parse(text.replace(/^(.{17})60/, '$159')) + 1_000;
}

/**
 * The events feed (issue 13): every event recorded for the key's account and mode, whether or not a
 * webhook subscription asked for it, with the exact JSON body webhooks send. The stored bodies are sent as
 * they are (strings), so the answer holds them byte for byte.
 */
export function registerEventRoutes(app: GatewayApp, deps: AppDeps): void {
  const { db } = deps.database;

  app.get(
    '/v1/events',
    {
      config: { errors: LIST_ERRORS },
      schema: {
        operationId: 'listEvents',
        tags,
        summary: 'List events',
        responseDescription: "One page of this key's events, newest first, each exactly as webhooks send it.",
        description: `The events of this key’s account and mode, newest first: the same events webhooks send, each exactly as its deliveries carry it, recorded whether or not a subscription asked for them (test pings excluded; a catalogue wholesaler’s \`wholesaler.status_changed\` only for accounts subscribed to it). Use it to catch up on events a receiver missed. Filters combine: \`type\` (one type), \`wholesaler\`, \`created_after\` (inclusive) and \`created_before\` (exclusive). Page with \`starting_after\` = the last \`id\` while \`has_more\`. ${RETENTION}`,
        querystring: EventListQuerySchema,
        response: { 200: EventListSchema },
      },
    },
    async (request, reply) => {
      const { limit, starting_after, type, wholesaler, created_after, created_before } = request.query;
      const page = await listEvents(db, tenantOf(request), {
        limit,
        ...(starting_after === undefined ? {} : { startingAfter: starting_after }),
        ...(type === undefined ? {} : { type }),
        ...(wholesaler === undefined ? {} : { wholesaler }),
        ...(created_after === undefined ? {} : { createdAfter: instant(created_after) }),
        ...(created_before === undefined ? {} : { createdBefore: instant(created_before) }),
      });
      // The stored bodies, as they are: a string with a JSON type is sent without the schema's serializer.
      const body = `{"events":[${page.payloads.join(',')}],"has_more":${page.hasMore}}`;
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );

  app.get(
    '/v1/events/:id',
    {
      config: { errors: ONE_ERRORS },
      schema: {
        operationId: 'getEvent',
        tags,
        summary: 'One event',
        description: `The event exactly as its webhook deliveries carry it. Another account’s or the other mode’s event is \`404 resource_not_found\`, as is one past the retention. ${RETENTION}`,
        params: EventParamsSchema,
        response: { 200: EventSchema },
      },
    },
    async (request, reply) => {
      const payload = await findEventPayload(db, tenantOf(request), request.params.id);
      if (payload === undefined) {
        throw new ApiError('resource_not_found', `No event ${request.params.id} for this API key.`, {
          param: 'id',
        });
      }
      return reply.type('application/json; charset=utf-8').send(payload);
    },
  );
}
