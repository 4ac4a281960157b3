import { ApiError, type ApiErrorOptions } from '../../core/errors.js';
import type { Credentials } from '../../msv3/credentials.js';
import type { Msv3Operation } from '../../msv3/operations/operation.js';
import type { UpstreamError } from '../../msv3/upstream-error.js';
import { callWholesalerRaw, type UpstreamDeps } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { apiErrorFromUpstream } from '../../wholesalers/upstream-errors.js';

/** Failures after which the wholesaler's answer, whatever it was, did not reach the gateway in a usable form. */
const ANSWER_LOST: ReadonlySet<UpstreamError['reason']> = new Set([
  'unreachable',
  'timeout',
  'decode',
  'too_large',
  // The gateway stopped waiting for the answer because it is shutting down.
  'shutdown',
]);

/** What a binding returns call sent, for the message when its answer is lost. */
export interface BindingRequest {
  /** e.g. `Return announcement`. */
  label: string;
  /** The MSV3 id sent (derived from the Idempotency-Key when there is one, `returns/ids.ts`). */
  id: string;
  /** Whether the request holds an Idempotency-Key, i.e. whether a retry sends the same id. */
  withKey: boolean;
  /** What to do instead of retrying when there is no key (a retry would be a new request). */
  withoutKey: string;
}

/**
 * One call of a binding returns operation (`retourenavisAnkuendigen`, `ruecknahmeangebotAnfordern`): the
 * wholesaler books what it receives, and recognises a repeated request by its id. After the request may
 * have reached the wholesaler (`maybeDelivered`), the Idempotency-Key stays bound to it, so the retry with
 * the key sends the same id and gets the wholesaler's answer instead of a second booking:
 * - an answer that was lost or could not be read (timeout, dropped connection, undecodable or too large)
 *   is 504 `return_outcome_unknown`, and so is an announcement answered without a result (`returns/announce.ts`);
 * - an error the wholesaler answered with (SOAP fault, HTTP 5xx) keeps its usual kind (e.g. 502
 *   `wholesaler_fault` with the wholesaler's texts), as for orders, keeping the key (`idempotencyKey: 'reopen'`).
 * A failure before anything was sent is mapped as usual, and releases the key.
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
  if (!ANSWER_LOST.has(result.error.reason)) {
    throw new ApiError(
      error.kind,
      `${error.message.replace(/\.?$/, '.')} ${sent.label} ${sent.id} may have been booked all the same. ${nextStep(sent)}.`,
      { ...error.options, idempotencyKey: 'reopen' },
    );
  }
  const cause = error.message.replace(/\.$/, '');
  throw returnOutcomeUnknown(wholesaler.id, sent, `${cause.charAt(0).toLowerCase()}${cause.slice(1)}`, {
    ...(error.options.upstream === undefined ? {} : { upstream: error.options.upstream }),
  });
}

/**
 * 504 `return_outcome_unknown` for a binding request that reached the wholesaler without an answer the
 * gateway can use (`why`, e.g. `the answer carried no result`). Its kind reopens the Idempotency-Key
 * (`core/idempotency-outcome.ts`), so the retry with the key sends the same id.
 */
export function returnOutcomeUnknown(
  wholesalerId: string,
  sent: BindingRequest,
  why: string,
  options: { upstream?: ApiErrorOptions['upstream'] } = {},
): ApiError {
  return new ApiError(
    'return_outcome_unknown',
    `${sent.label} ${sent.id} was sent to ${wholesalerId}, but its answer was lost (${why}); the wholesaler may have booked it. ${nextStep(sent)}.`,
    { wholesaler: wholesalerId, retryAfter: 5, ...options },
  );
}

function nextStep(sent: BindingRequest): string {
  return sent.withKey
    ? 'Retry with the same Idempotency-Key: it sends the same id, which the wholesaler answers from its records instead of booking it again'
    : sent.withoutKey;
}
