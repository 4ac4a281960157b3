import { dryRunOrder } from '../../services/orders/dry-run.js';
import { placeOrder } from '../../services/orders/placement.js';
import { listOrderSummaries, orderRecord } from '../../services/orders/record.js';
import { orderStatus } from '../../services/orders/status.js';
import type { AppDeps } from '../app-deps.js';
import { Msv3CredentialHeaders, msv3Credentials } from '../msv3-credentials.js';
import { withCallNotes } from '../request-notes.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import { WholesalerQuerySchema } from '../schemas/common.js';
import {
  OrderListQuerySchema,
  OrderListSchema,
  OrderRecordParamsSchema,
  OrderRecordSchema,
} from '../schemas/order-records.js';
import {
  OrderQuerySchema,
  OrderResultSchema,
  OrderStatusParamsSchema,
  OrderStatusSchema,
  orderBodySchema,
} from '../schemas/orders.js';
import type { GatewayApp } from '../types.js';

const ORDER_ERRORS = routeErrors(
  [
    'order_rejected',
    'order_outcome_unknown',
    'order_type_not_agreed',
    'order_labels_exceeded',
    'complete_containers_only',
    WHOLESALER_CALL_ERRORS,
  ],
  {
    invalid_request:
      'message and `param` name the sub-order, item and field, e.g. `items[3].quantity` or `sub_orders[1].items[3].quantity`, or `items[3].pzn` for a PZN whose check digit is wrong (the message says which it needs)',
    order_rejected:
      "every sub-order was refused: the wholesaler's `Auftragsfehler` texts in the message, the first one's in `upstream` (some refused, others taken: 200 with `placement_status: partially_confirmed`)",
    order_outcome_unknown:
      'sent, but its outcome could not be confirmed or recorded; `order_id` names it: retry with the same Idempotency-Key, or ask its status',
    order_type_not_agreed: '`param` names the sub-order’s `order_type`; nothing was sent',
    order_labels_exceeded: '`param` names the `order_label` over the limit; nothing was sent',
    complete_containers_only: '`param` names the `container_id` or `delivery_preference`; nothing was sent',
  },
);

const STATUS_ERRORS = routeErrors(['order_not_found', WHOLESALER_CALL_ERRORS]);
const RECORD_ERRORS = routeErrors(['order_not_found']);
const LIST_ERRORS = routeErrors([]);

const ORDER_DESCRIPTION = `Places one MSV3 order (\`bestellen\`): \`items\` as one sub-order (normal unless \`order_type\` says batch, special or shipping), or \`sub_orders\`, each with its own type, label, container and items, sent as one MSV3 \`Bestellung\` (docs/orders.md). Types other than normal, labels of the client's own choosing and containers are checked against the contract before anything is sent. \`status\`: \`confirmed\` (answered; \`placement_status\` says whether every sub-order was taken or only some, each sub-order's answer and \`Auftragsfehler\` in \`sub_orders\`), \`queued_night_mode\` (taken in night mode; every sub-order \`pending\`: read the answer later with the status endpoint), \`dry_run\`.

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
        responseDescription:
          'The order as the wholesaler answered it (`confirmed`), taken in night mode (`queued_night_mode`), or the checks of a dry run (`dry_run`).',
        description: ORDER_DESCRIPTION,
        headers: Msv3CredentialHeaders,
        querystring: OrderQuerySchema,
        body: orderBodySchema(deps.config.orders.maxPositions),
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
        responseDescription:
          "The order's status at the wholesaler, with its answer once the wholesaler has one.",
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

  app.get(
    '/v1/orders/:order_id',
    {
      config: { errors: RECORD_ERRORS },
      schema: {
        operationId: 'getOrder',
        tags: ['orders'],
        summary: 'The stored order: request, answer per sub-order, history, what arrived',
        responseDescription:
          'The order as the gateway stored it: the answer per sub-order, its history, and per line what was delivered and reported short.',
        description:
          'Answers from what the gateway stored, without calling the wholesaler and without MSV3 credentials: the request and the answer per sub-order, every change of placement status and MSV3 status, and per line what was ordered, confirmed, delivered and reported short, with the delivery notes that carried it and the batch and expiry of each delivered part (docs/orders.md). Delivery notes count once the gateway has seen them (`GET /v1/deliveries`, a history lookup, the sandbox’s own notes). Another account’s or mode’s order is 404 `order_not_found`.',
        params: OrderRecordParamsSchema,
        response: { 200: OrderRecordSchema },
      },
    },
    async (request) => orderRecord(deps.database.db, request.auth, request.params.order_id),
  );

  app.get(
    '/v1/orders',
    {
      config: { errors: LIST_ERRORS },
      schema: {
        operationId: 'listOrders',
        tags: ['orders'],
        summary: 'The orders of this key’s account and mode, newest first',
        responseDescription: 'A page of orders, newest first, each without its items and history.',
        description:
          'From what the gateway stored, without calling the wholesaler: each order without its items and history (`GET /v1/orders/{order_id}` has them), filtered by wholesaler, placement status, creation time and PZN, a page at a time (`starting_after`).',
        querystring: OrderListQuerySchema,
        response: { 200: OrderListSchema },
      },
    },
    async (request) => {
      const q = request.query;
      return listOrderSummaries(deps.database.db, request.auth, {
        limit: q.limit ?? 20,
        ...(q.starting_after === undefined ? {} : { startingAfter: q.starting_after }),
        ...(q.wholesaler === undefined ? {} : { wholesaler: q.wholesaler }),
        ...(q.placement_status === undefined ? {} : { placementStatus: q.placement_status }),
        ...(q.created_after === undefined ? {} : { createdAfter: Date.parse(q.created_after) }),
        ...(q.created_before === undefined ? {} : { createdBefore: Date.parse(q.created_before) }),
        ...(q.pzn === undefined ? {} : { pzn: q.pzn }),
      });
    },
  );
}
