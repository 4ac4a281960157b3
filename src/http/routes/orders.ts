import { dryRunOrder } from '../../services/orders/dry-run.js';
import { placeOrder } from '../../services/orders/placement.js';
import { orderStatus } from '../../services/orders/status.js';
import type { AppDeps } from '../app-deps.js';
import { Msv3CredentialHeaders, msv3Credentials } from '../msv3-credentials.js';
import { withCallNotes } from '../request-notes.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import { WholesalerQuerySchema } from '../schemas/common.js';
import {
  OrderBodySchema,
  OrderQuerySchema,
  OrderResultSchema,
  OrderStatusParamsSchema,
  OrderStatusSchema,
} from '../schemas/orders.js';
import type { GatewayApp } from '../types.js';

const ORDER_ERRORS = routeErrors(['order_rejected', 'order_outcome_unknown', WHOLESALER_CALL_ERRORS], {
  invalid_request: 'message and `param` name the item and field, e.g. `items[3].quantity`',
  order_rejected: "the wholesaler's `Auftragsfehler` texts in `upstream`",
  order_outcome_unknown:
    'sent, but its outcome could not be confirmed or recorded; `order_id` names it: retry with the same Idempotency-Key, or ask its status',
});

const STATUS_ERRORS = routeErrors(['order_not_found', WHOLESALER_CALL_ERRORS]);

const ORDER_DESCRIPTION = `Places one MSV3 order (\`bestellen\`) with one NORMAL sub-order. \`status\`: \`confirmed\` (answered), \`queued_night_mode\` (taken in night mode; read the answer later with the status endpoint), \`dry_run\`.

**Never placed twice.** Send an \`Idempotency-Key\`: the MSV3 order id is derived from it and the order is stored before it is sent, so a retry (after a timeout, a dropped connection or a gateway crash) asks the wholesaler what became of it (\`bestellstatusAbfragen\`) instead of ordering again. A retry of a finished request returns the stored response with \`Idempotent-Replayed: true\` and calls no wholesaler.

**Dry run** (\`?dry_run=true\`): the same validation, the contract (order type, next cut-off) and current availability; places nothing. Findings are \`checks.warnings\`, never errors.`;

export function registerOrderRoutes(app: GatewayApp, deps: AppDeps): void {
  const { orders } = deps.services;

  app.post(
    '/v1/orders',
    {
      config: { idempotent: true, errors: ORDER_ERRORS },
      schema: {
        operationId: 'placeOrder',
        tags: ['orders'],
        summary: 'Place an order (bestellen), or validate it with dry_run=true',
        description: ORDER_DESCRIPTION,
        headers: Msv3CredentialHeaders,
        querystring: OrderQuerySchema,
        body: OrderBodySchema,
        response: {
          200: OrderResultSchema,
        },
      },
    },
    async (request) => {
      const credentials = msv3Credentials(request, request.body.wholesaler);
      if (request.query.dry_run)
        return dryRunOrder(withCallNotes(request, orders), request.auth, credentials, request.body);
      // What becomes of the Idempotency-Key after a failure is the placement's decision (the error's
      // `idempotencyKey`), applied by the error handler.
      return placeOrder(withCallNotes(request, orders), request.auth, credentials, {
        ...request.body,
        idempotency: request.idempotency,
        log: request.log,
      });
    },
  );

  app.get(
    '/v1/orders/:order_id/status',
    {
      config: { errors: STATUS_ERRORS },
      schema: {
        operationId: 'getOrderStatus',
        tags: ['orders'],
        summary: 'Status of an order placed through the gateway (bestellstatusAbfragen)',
        description: `Asks the wholesaler for the order's answer with its MSV3 order id and updates the stored order (a night-mode order becomes confirmed; a change is announced as \`order.status_changed\`). An order is visible only to the API key's account and mode, with the wholesaler it was placed with and the same MSV3 user name, after the wholesaler accepted the credentials in this call: another pharmacy's order is 404 \`order_not_found\`.`,
        headers: Msv3CredentialHeaders,
        params: OrderStatusParamsSchema,
        querystring: WholesalerQuerySchema,
        response: { 200: OrderStatusSchema },
      },
    },
    async (request) =>
      orderStatus(
        withCallNotes(request, orders),
        request.auth,
        msv3Credentials(request, request.query.wholesaler),
        {
          orderId: request.params.order_id,
          wholesaler: request.query.wholesaler,
        },
      ),
  );
}
