import type { ErrorKind, IdempotencyOutcome } from './errors.js';

/** Errors that are the final answer of the operation itself: repeating the request would give them again. */
const FINAL_ERROR_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'order_rejected',
  'wholesaler_rejected_request',
  'wholesaler_function_not_agreed',
  'operation_not_supported',
  'delivery_not_found',
  'document_not_found',
  'conflict',
]);

/**
 * Errors that leave the outcome open: the retry must reconcile instead of acting again (for returns: send
 * the same MSV3 id again, derived from the key's first use, which the wholesaler answers from its records).
 */
const OPEN_ERROR_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'order_outcome_unknown',
  'return_outcome_unknown',
]);

/**
 * The rule by status and error kind, for answers whose service states nothing else
 * (`ApiErrorOptions.idempotencyKey`): 2xx/3xx and final errors are stored; open outcomes reopen the key;
 * everything else (400, 401, 404 for an unknown wholesaler, 5xx) releases it.
 */
export function defaultOutcome(status: number, errorKind: string | undefined): IdempotencyOutcome {
  if (status < 400) return 'store';
  const kind = errorKind as ErrorKind | undefined;
  if (kind !== undefined && OPEN_ERROR_KINDS.has(kind)) return 'reopen';
  if (kind !== undefined && FINAL_ERROR_KINDS.has(kind)) return 'store';
  return 'release';
}
