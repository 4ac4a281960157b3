import { ApiError } from '../http/errors.js';
import { apiErrorFromUpstream } from '../http/upstream-errors.js';
import type { Credentials } from '../msv3/credentials.js';
import type { Msv3Operation } from '../msv3/operations/operation.js';
import type { ResolvedWholesaler } from '../wholesalers/registry.js';
import { callWholesalerRaw, type UpstreamDeps } from './wholesaler-call.js';

/** What a binding returns call sent, for the message when its answer is lost. */
export interface BindingRequest {
  /** e.g. `Return announcement`. */
  label: string;
  /** The MSV3 id sent (derived from the Idempotency-Key when there is one, `returns-ids.ts`). */
  id: string;
  /** Whether the request holds an Idempotency-Key, i.e. whether a retry sends the same id. */
  withKey: boolean;
  /** What to do instead of retrying when there is no key (a retry would be a new request). */
  withoutKey: string;
}

/**
 * One call of a binding returns operation (`retourenavisAnkuendigen`, `ruecknahmeangebotAnfordern`): the
 * wholesaler books what it receives, and recognises a repeated request by its id. A failure after the
 * request may have been acted on (`maybeDelivered`: timeout or dropped connection after sending, 5xx,
 * server fault, an undecodable answer) is 504 `return_outcome_unknown`, which keeps the Idempotency-Key
 * open (`defaultOutcome`), so the retry with the key sends the same id and gets the wholesaler's answer
 * instead of a second booking. Any other failure is mapped as usual, and releases the key.
 */
export async function callBindingReturnOperation<Req, Res>(
  upstream: UpstreamDeps,
  wholesaler: ResolvedWholesaler,
  operation: Msv3Operation<Req, Res>,
  credentials: Credentials,
  request: Req,
  sent: BindingRequest,
): Promise<Res> {
  const result = await callWholesalerRaw(upstream, wholesaler, operation, credentials, request);
  if (result.ok) return result.value;
  const error = apiErrorFromUpstream(result.error, wholesaler.id);
  if (!result.error.maybeDelivered) throw error;
  const cause = error.message.replace(/\.$/, '');
  const next = sent.withKey
    ? 'Retry with the same Idempotency-Key: it sends the same id, which the wholesaler answers from its records instead of booking it again'
    : sent.withoutKey;
  throw new ApiError(
    'return_outcome_unknown',
    `${sent.label} ${sent.id} was sent to ${wholesaler.id}, but its answer was lost (${cause.charAt(0).toLowerCase()}${cause.slice(1)}); the wholesaler may have booked it. ${next}.`,
    {
      wholesaler: wholesaler.id,
      retryAfter: 5,
      ...(error.options.upstream === undefined ? {} : { upstream: error.options.upstream }),
    },
  );
}
