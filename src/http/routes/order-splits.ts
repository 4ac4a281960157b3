import { splitOrder } from '../../services/orders/split.js';
import type { AppDeps } from '../app-deps.js';
import { setIdempotencyOutcome } from '../idempotency.js';
import { Msv3CredentialDictionaryHeader, msv3CredentialsFor } from '../msv3-credential-dictionary.js';
import { withCallNotes } from '../request-notes.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import { SplitBodySchema, SplitQuerySchema, SplitResultSchema } from '../schemas/order-splits.js';
import type { GatewayApp } from '../types.js';

const SPLIT_ERRORS = routeErrors([WHOLESALER_CALL_ERRORS], {
  invalid_request:
    '`param` names the field: `items[2].pzn` (a repeated PZN, or a wrong check digit), `wholesalers[1]` (a repeated wholesaler)',
  invalid_idempotency_key: 'also when a split (not a dry run) comes without an Idempotency-Key',
  wholesaler_credentials_missing:
    '`X-MSV3-Credentials` has no member, or a malformed one, for a wholesaler of the request',
  wholesaler_unavailable:
    'and every other wholesaler call error: only when no wholesaler of the request could be asked for availability (the first one’s error); nothing was stored or placed',
  service_unavailable:
    'the database failed; the Idempotency-Key stays with this request: retry with it, and a stored plan is finished, never made again',
});

const DESCRIPTION = `One order's items spread over several wholesalers in one call (docs/split-orders.md). The gateway asks every wholesaler in \`wholesalers\` (preference order) for availability, plans which wholesaler gets which line, stores the plan, and places one normal order per wholesaler that got lines, with the same guarantees as \`POST /v1/orders\`.

**The plan.** Per line: the first wholesaler in preference order that delivers the full quantity gets all of it; if none does, each wholesaler in turn gets what it delivers of the rest. Never more than the requested quantity in total; what nobody delivers is \`quantity_undeliverable\` with its reason. A wholesaler whose availability fails gets no lines (its error in \`wholesalers\`).

**Never placed twice.** An \`Idempotency-Key\` is required to place (not for a dry run). The plan and every wholesaler order's MSV3 order id are stored before the first \`bestellen\`. A retry with the same key never plans again: orders that were answered are answered from what is stored, open ones are reconciled (\`bestellstatusAbfragen\`), ones not placed are placed, each exactly once, also after a gateway crash or a lost answer.

**The answer.** \`status: complete\` when every wholesaler order is answered (taken or rejected), stored for replay; \`incomplete\` when one is open (\`outcome_unknown\`) or \`failed\`: the key stays open and a retry with it finishes only those. Each order's \`order_id\` works with \`GET /v1/orders/{order_id}\`.

**Dry run** (\`?dry_run=true\`): asks availability and returns the plan; places and stores nothing.

Logins: \`X-MSV3-Credentials\`, one member per wholesaler, never stored or logged.`;

export function registerOrderSplitRoutes(app: GatewayApp, deps: AppDeps): void {
  const { orders } = deps.services;

  app.post(
    '/v1/orders/split',
    {
      config: { idempotent: true, errors: SPLIT_ERRORS },
      schema: {
        operationId: 'splitOrder',
        tags: ['orders'],
        summary: 'Spread an order over several wholesalers by availability, or plan it with dry_run=true',
        responseDescription:
          'The plan with every wholesaler order and its outcome, and per requested line where its units go (`complete`, `incomplete`), or the plan alone (`dry_run`).',
        description: DESCRIPTION,
        headers: Msv3CredentialDictionaryHeader,
        querystring: SplitQuerySchema,
        body: SplitBodySchema,
        response: { 200: SplitResultSchema },
      },
    },
    async (request) => {
      const credentials = msv3CredentialsFor(request, request.body.wholesalers);
      const result = await splitOrder(withCallNotes(request, orders), request.auth, credentials, {
        wholesalers: request.body.wholesalers,
        items: request.body.items,
        dryRun: request.query.dry_run,
        idempotency: request.idempotency,
        log: request.log,
      });
      // Some wholesaler order is open or not placed: the retry with this key finishes it (not a replay).
      if (result.status === 'incomplete') setIdempotencyOutcome(request, 'reopen');
      return result;
    },
  );
}
