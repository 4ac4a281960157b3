import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Tenant } from '../../core/caller.js';
import { listDeliveries } from '../../store/webhook-delivery-log.js';
import { deleteSubscription, listSubscriptions } from '../../store/webhook-subscriptions.js';
import {
  changeSubscription,
  createSubscription,
  getSubscription,
  retryDelivery,
  rotateSecret,
  sendTestEvent,
} from '../../webhooks/subscriptions/service.js';
import type { AppDeps } from '../app-deps.js';
import { routeErrors } from '../route-errors.js';
import {
  AttemptResultSchema,
  CreateWebhookSchema,
  DeliveryListQuerySchema,
  DeliveryListSchema,
  DeliveryParamsSchema,
  RevealedWebhookSchema,
  UpdateWebhookSchema,
  WebhookListSchema,
  WebhookParamsSchema,
  WebhookSchema,
} from '../schemas/webhooks.js';
import type { GatewayApp } from '../types.js';
import { attemptResultJson, deliveryJson, webhookJson } from '../webhooks-view.js';

const tags = ['webhooks'];
const tenantOf = (request: FastifyRequest): Tenant => ({
  accountId: request.auth.accountId,
  mode: request.auth.mode,
});

/**
 * Create, list, delete (docs/webhooks.md "Subscriptions") plus get, update, test, delivery log, redelivery
 * and secret rotation.
 */
const CREATE_ERRORS = routeErrors(['wholesaler_not_found', 'endpoint_not_allowed', 'conflict'], {
  conflict: 'the account has the most subscriptions a mode may have',
});
const LIST_ERRORS = routeErrors([]);
const ONE_ERRORS = routeErrors(['webhook_not_found']);
const UPDATE_ERRORS = routeErrors(['webhook_not_found', 'endpoint_not_allowed']);
const RETRY_ERRORS = routeErrors(['webhook_not_found', 'resource_not_found', 'conflict'], {
  resource_not_found: 'no such delivery of this subscription',
  conflict: 'the delivery is being attempted right now; see Retry-After',
});

export function registerWebhookRoutes(app: GatewayApp, deps: AppDeps): void {
  const { db } = deps.database;
  const { subscriptions: subscriptionDeps, attempts: deliverDeps } = deps.services;
  const now = () => deps.clock.now();

  app.post(
    '/v1/webhooks',
    {
      config: { idempotent: true, errors: CREATE_ERRORS },
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Subscribe a URL to events',
        responseDescription:
          'The new subscription, with its `signing_secret` in full (shown only here and after a rotation).',
        description:
          'Returns the subscription with `signing_secret` in full, this once. `wholesaler` must be an id this key can use (`GET /v1/wholesalers`: the catalogue for its mode, `<id>_test` for test keys, the account’s custom wholesalers), else 404 `wholesaler_not_found`. The URL is checked now (scheme, and every address its host resolves to) and again before every delivery.',
        body: CreateWebhookSchema,
        response: { 201: RevealedWebhookSchema },
      },
    },
    async (request, reply) => {
      const created = await createSubscription(subscriptionDeps, tenantOf(request), request.body);
      return reply.code(201).send(webhookJson(created, now(), { revealSecret: true }));
    },
  );

  app.get(
    '/v1/webhooks',
    {
      config: { errors: LIST_ERRORS },
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: 'List webhook subscriptions',
        responseDescription:
          "The subscriptions of this key's account and mode, oldest first, secrets masked.",
        response: { 200: WebhookListSchema },
      },
    },
    async (request) => ({
      webhooks: (await listSubscriptions(db, tenantOf(request))).map((s) => webhookJson(s, now())),
    }),
  );

  app.get(
    '/v1/webhooks/:id',
    {
      config: { errors: ONE_ERRORS },
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'One webhook subscription',
        responseDescription: 'The subscription, its secret masked.',
        params: WebhookParamsSchema,
        response: { 200: WebhookSchema },
      },
    },
    async (request) =>
      webhookJson(await getSubscription({ db }, tenantOf(request), request.params.id), now()),
  );

  app.patch(
    '/v1/webhooks/:id',
    {
      config: { idempotent: true, errors: UPDATE_ERRORS },
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change url or events; re-enable or pause',
        responseDescription: 'The subscription as changed, its secret masked.',
        description:
          '`active: false` pauses the subscription: events still queue for it, unsent. `active: true` resumes a paused one or re-enables one the gateway disabled (410 Gone, or 5 days of failed deliveries); its waiting deliveries are then sent at once, as after a change of `url`.',
        params: WebhookParamsSchema,
        body: UpdateWebhookSchema,
        response: { 200: WebhookSchema },
      },
    },
    async (request) => {
      const changed = await changeSubscription(
        subscriptionDeps,
        tenantOf(request),
        request.params.id,
        request.body,
      );
      return webhookJson(changed, now());
    },
  );

  app.delete(
    '/v1/webhooks/:id',
    {
      config: { errors: ONE_ERRORS },
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a subscription',
        description: 'Permanently, with its pending deliveries and delivery log.',
        params: WebhookParamsSchema,
        response: { 204: Type.Null({ description: 'Deleted.' }) },
      },
    },
    async (request, reply) => {
      if (!(await deleteSubscription(db, tenantOf(request), request.params.id))) {
        await getSubscription({ db }, tenantOf(request), request.params.id);
      }
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/webhooks/:id/test',
    {
      config: { idempotent: true, errors: ONE_ERRORS },
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a signed ping event now',
        responseDescription: 'The outcome of the one attempt to deliver the `ping`.',
        description:
          'Sends a `ping` event (signed like every delivery) at once, also to a disabled subscription, and returns the outcome. Not retried; does not count towards disabling.',
        params: WebhookParamsSchema,
        response: { 200: AttemptResultSchema },
      },
    },
    async (request) =>
      attemptResultJson(await sendTestEvent(deliverDeps, tenantOf(request), request.params.id)),
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: { errors: ONE_ERRORS },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: 'Delivery log',
        responseDescription:
          "One page of the subscription's deliveries, newest first, each with its attempts.",
        description: 'Deliveries of this subscription, newest first, each with its attempts.',
        params: WebhookParamsSchema,
        querystring: DeliveryListQuerySchema,
        response: { 200: DeliveryListSchema },
      },
    },
    async (request) => {
      const tenant = tenantOf(request);
      await getSubscription({ db }, tenant, request.params.id);
      const { limit, starting_after: startingAfter, status } = request.query;
      const page = await listDeliveries(db, tenant, request.params.id, { limit, startingAfter, status });
      return { deliveries: page.deliveries.map(deliveryJson), has_more: page.hasMore };
    },
  );

  app.post(
    '/v1/webhooks/:id/deliveries/:delivery_id/retry',
    {
      config: { idempotent: true, errors: RETRY_ERRORS },
      schema: {
        operationId: 'retryWebhookDelivery',
        tags,
        summary: 'Send one delivery again now',
        responseDescription: 'The outcome of the attempt.',
        description:
          'One immediate attempt, whatever the delivery’s state (delivered ones are sent again). A pending delivery that fails keeps its retry schedule; 409 while it is being attempted.',
        params: DeliveryParamsSchema,
        response: { 200: AttemptResultSchema },
      },
    },
    async (request) =>
      attemptResultJson(
        await retryDelivery(deliverDeps, tenantOf(request), request.params.id, request.params.delivery_id),
      ),
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      config: { idempotent: true, errors: ONE_ERRORS },
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'Roll the signing secret',
        responseDescription:
          'The subscription with its new `signing_secret` in full, and until when the previous one still signs.',
        description:
          'Returns the new `signing_secret` in full, this once. The previous secret keeps signing alongside it for 24 hours (`previous_secret_expires_at`): every signature header then carries two signatures.',
        params: WebhookParamsSchema,
        response: { 200: RevealedWebhookSchema },
      },
    },
    async (request) => {
      const rotated = await rotateSecret({ db, clock: deps.clock }, tenantOf(request), request.params.id);
      return webhookJson(rotated, now(), { revealSecret: true });
    },
  );
}
