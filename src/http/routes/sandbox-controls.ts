import type { FastifyRequest } from 'fastify';
import type { ErrorKind } from '../../core/errors.js';
import {
  deliverSandboxOrder,
  processSandboxOrder,
  setSandboxStatus,
} from '../../services/sandbox-controls.js';
import type { AppDeps } from '../app-deps.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import { OrderStatusParamsSchema } from '../schemas/orders.js';
import {
  DeliverBodySchema,
  DeliveredOrderSchema,
  ProcessedOrderSchema,
  SandboxStatusSchema,
  WholesalerParamsSchema,
} from '../schemas/sandbox-controls.js';
import type { GatewayApp } from '../types.js';

/**
 * Test helpers (docs/sandbox.md "Test helpers"), after Stripe's `test_helpers`: with a pk_test_ key,
 * make the caller's own sandbox do now what otherwise takes a night or never happens, and raise the
 * events that go with it. A live key gets 403 `test_mode_required`.
 */

const tags = ['test_helpers'];
const NOTES: Partial<Record<ErrorKind, string>> = {
  test_mode_required: 'the key is a pk_live_ key: test helpers act on the sandbox only',
  operation_not_supported:
    'the order or id is a wholesaler’s own test server (`<id>_test`), not the sandbox, or (deliver) speaks MSV3 v1, which has no delivery notices',
  wholesaler_unreachable: 'the sandbox (SANDBOX_URL) could not be reached',
  wholesaler_http_error: 'the sandbox refused the helper',
  wholesaler_unavailable: 'after `process`, the status read failed: the sandbox wholesaler is down',
};
const ORDER_ERRORS = routeErrors(
  ['test_mode_required', 'order_not_found', 'conflict', 'operation_not_supported', WHOLESALER_CALL_ERRORS],
  {
    ...NOTES,
    order_not_found: 'no such order for this key’s account and mode (another account’s order is unknown too)',
    conflict:
      'process: the order has been processed already; deliver: it waits for the night to end, or has no line to deliver',
  },
);
const STATUS_ERRORS = routeErrors(
  [
    'test_mode_required',
    'wholesaler_not_found',
    'operation_not_supported',
    'wholesaler_unreachable',
    'wholesaler_http_error',
  ],
  NOTES,
);

const tenant = (request: FastifyRequest) => ({ accountId: request.auth.accountId, mode: request.auth.mode });

export function registerSandboxControlRoutes(app: GatewayApp, deps: AppDeps): void {
  const helpers = deps.services.sandbox;

  app.post(
    '/v1/test_helpers/orders/:order_id/process',
    {
      config: { errors: ORDER_ERRORS },
      schema: {
        operationId: 'processSandboxOrder',
        tags,
        summary: 'Process a night-mode sandbox order now',
        responseDescription:
          "The order's status as read after processing, and the delivery notices it created.",
        description:
          'A sandbox order taken in night mode (`status: queued_night_mode`, e.g. with the scenario PZN 09990139 or in `MOCK_NIGHT_HOURS`) is processed at once, as when the night ends. The gateway then reads its status as `GET /v1/orders/{order_id}/status` does, which records `order.status_changed`, and records `delivery.received` (and `delivery.shortage`) for the delivery notices it created. No MSV3 credentials are needed: the sandbox takes the order’s user name.',
        params: OrderStatusParamsSchema,
        response: { 200: ProcessedOrderSchema },
      },
    },
    async (request) => processSandboxOrder(helpers, tenant(request), request.params.order_id),
  );

  app.post(
    '/v1/test_helpers/orders/:order_id/deliver',
    {
      config: { errors: ORDER_ERRORS },
      schema: {
        operationId: 'deliverSandboxOrder',
        tags,
        summary: 'Issue another delivery notice for a sandbox order',
        responseDescription: 'The delivery notices issued.',
        description:
          'The sandbox issues a new delivery notice (one per sub-order and tour) for the lines of a processed order, numbered like every other, with its PDF. With `{"shortages": true}` half of every line (rounded up) is missing. `delivery.received` (and, with shortages, `delivery.shortage`) is recorded at once, without a `GET /v1/deliveries`; a later read does not record it again.',
        params: OrderStatusParamsSchema,
        body: DeliverBodySchema,
        response: { 200: DeliveredOrderSchema },
      },
    },
    async (request) =>
      deliverSandboxOrder(
        helpers,
        tenant(request),
        request.params.order_id,
        request.body?.shortages ?? false,
      ),
  );

  for (const up of [false, true]) {
    const word = up ? 'up' : 'down';
    app.post(
      `/v1/test_helpers/wholesalers/:id/${word}`,
      {
        config: { errors: STATUS_ERRORS },
        schema: {
          operationId: up ? 'bringSandboxWholesalerUp' : 'takeSandboxWholesalerDown',
          tags,
          summary: up ? 'Bring a sandbox wholesaler up again' : 'Take a sandbox wholesaler down',
          responseDescription: up
            ? 'The sandbox wholesaler is up, and whether that changed anything.'
            : 'The sandbox wholesaler is down, and whether that changed anything.',
          description: up
            ? 'The caller’s sandbox wholesaler answers again. If it was down, `wholesaler.status_changed` with `status: up` is recorded. Calls made while it was down may have opened the circuit breaker: then calls fail with 503 `wholesaler_circuit_open` until its cool-down ends (BREAKER_COOLDOWN_MS).'
            : 'The caller’s sandbox wholesaler answers every MSV3 request with HTTP 503, as a wholesaler in maintenance does: calls to it fail with 503 `wholesaler_unavailable` (`upstream.http_status` 503). If it was up, `wholesaler.status_changed` with `status: down` is recorded. Only this account’s sandbox is affected; it stays down, across restarts, until `/up`.',
          params: WholesalerParamsSchema,
          response: { 200: SandboxStatusSchema },
        },
      },
      async (request) => setSandboxStatus(helpers, tenant(request), request.params.id, up),
    );
  }
}
