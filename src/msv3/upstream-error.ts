import type { RefusalCause } from './concurrency.js';
import type { Msv3Fault, Msv3FaultKind } from './result.js';

/**
 * Why a wholesaler call failed. Plain data (JSON-safe, never holds credentials); mapped to API error kinds
 * in exactly one place (`wholesalers/upstream-errors.ts`).
 *
 * `maybeDelivered`: true when the wholesaler may have received **and acted on** the request (the body was
 * fully written and then the answer was lost, or it answered with a 5xx or a server-side fault); false when it
 * certainly did not (no connection, circuit open, overloaded, 401/403, 3xx/4xx, a Sender-side fault).
 * The order service reconciles with `bestellstatusAbfragen` when it is true.
 *
 * `retryable`: a later identical attempt may succeed. It says nothing about duplicates: for a
 * non-idempotent operation (`bestellen`) check `maybeDelivered` too.
 */
export type UpstreamError =
  | UnreachableError
  | TimeoutError
  | HttpStatusError
  | CredentialsRejectedError
  | SoapFaultError
  | DecodeFailedError
  | TooLargeError
  | CircuitOpenError
  | OverloadedError
  | ShutdownError;

interface UpstreamErrorBase {
  /** Wholesaler id. */
  target: string;
  /** MSV3 operation, e.g. `bestellen`; `probe` for a health probe. */
  operation: string;
  maybeDelivered: boolean;
  retryable: boolean;
}

/** No usable connection, or the connection broke (`maybeDelivered` tells whether before or after sending). */
interface UnreachableError extends UpstreamErrorBase {
  reason: 'unreachable';
  /** e.g. `ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_SOCKET`, `ADDRESS_NOT_ALLOWED`, `TRANSPORT_CLOSED`. */
  code: string;
  detail: string;
}

export type TimeoutPhase = 'connect' | 'headers' | 'body' | 'total';

interface TimeoutError extends UpstreamErrorBase {
  reason: 'timeout';
  phase: TimeoutPhase;
  timeoutMs: number;
}

/** A status that is neither success, nor 401/403, nor a SOAP fault (includes 3xx: redirects are never followed). */
interface HttpStatusError extends UpstreamErrorBase {
  reason: 'http_status';
  status: number;
  contentType?: string;
  /** The start of the body, for support; truncated. */
  bodySnippet: string;
  /** When the wholesaler's Retry-After header says to try again, from when it answered. */
  retryAfterMs?: number;
  /** The body looked like a SOAP envelope but could not be decoded: the decoder's words. */
  soapProblem?: string;
}

interface CredentialsRejectedError extends UpstreamErrorBase {
  reason: 'credentials_rejected';
  status: number;
  /** `WWW-Authenticate` value, e.g. `Basic realm="MSV3"`. */
  challenge?: string;
}

interface SoapFaultError extends UpstreamErrorBase {
  reason: 'soap_fault';
  status: number;
  fault: Msv3Fault;
}

interface DecodeFailedError extends UpstreamErrorBase {
  reason: 'decode';
  status: number;
  /** The codec's `DecodeError.message`. */
  detail: string;
}

interface TooLargeError extends UpstreamErrorBase {
  reason: 'too_large';
  status: number;
  limitBytes: number;
}

interface CircuitOpenError extends UpstreamErrorBase {
  reason: 'circuit_open';
  retryAfterMs: number;
}

/**
 * The gateway's own per-endpoint limit refused the call before sending it (docs/resilience.md
 * "Overload"): the queue was full, the estimated wait exceeded the deadline, or the deadline passed.
 */
interface OverloadedError extends UpstreamErrorBase {
  reason: 'overloaded';
  cause: RefusalCause;
  /** Estimated time until the queue ahead has drained: when a retry is worth it. */
  retryAfterMs: number;
}

/**
 * The gateway itself stopped the call because it is shutting down (its limit, SHUTDOWN_TIMEOUT_MS, is
 * near): `maybeDelivered` tells whether the request had been sent (docs/resilience.md "Shutdown").
 */
interface ShutdownError extends UpstreamErrorBase {
  reason: 'shutdown';
}

type WithoutRetryable<E> = E extends UpstreamError ? Omit<E, 'retryable'> : never;
export type UpstreamErrorFields = WithoutRetryable<UpstreamError>;

/** Codes of refusals that repeat identically on every attempt. */
const PERMANENT_UNREACHABLE_CODES = new Set(['ADDRESS_NOT_ALLOWED', 'ERR_INVALID_URL']);
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
/** Proxy statuses meaning "the service behind me is down"; they count towards the circuit breaker. */
const OUTAGE_STATUSES = new Set([502, 503, 504]);
/** Faults for load or server-side trouble; a fault about the request itself repeats on every attempt. */
const RETRYABLE_FAULTS = new Set<Msv3FaultKind>(['DenialOfServiceFault', 'ServerFault']);

/** Builds an error and fills in `retryable`; the one place the retry rules live. */
export function upstreamError<F extends UpstreamErrorFields>(fields: F): F & { retryable: boolean } {
  return { ...fields, retryable: isRetryable(fields) };
}

function isRetryable(e: UpstreamErrorFields): boolean {
  switch (e.reason) {
    case 'unreachable':
      return !PERMANENT_UNREACHABLE_CODES.has(e.code);
    case 'timeout':
    case 'circuit_open':
    case 'overloaded':
    case 'shutdown':
      return true;
    case 'http_status':
      return RETRYABLE_STATUSES.has(e.status);
    case 'soap_fault':
      return RETRYABLE_FAULTS.has(e.fault.kind) || (e.fault.kind === 'Unknown' && isReceiverFault(e.fault));
    case 'credentials_rejected':
    case 'decode':
    case 'too_large':
      return false;
  }
}

/**
 * Whether a SOAP fault leaves open that the wholesaler acted on the request: a server-side failure may come
 * after the order was booked; a validation, authorisation or throttling refusal comes before.
 */
export function faultMayFollowProcessing(fault: Msv3Fault): boolean {
  if (fault.kind === 'ServerFault') return true;
  return fault.kind === 'Unknown' && isReceiverFault(fault);
}

function isReceiverFault(fault: Msv3Fault): boolean {
  return fault.soapCode !== 'Sender';
}

/**
 * Whether the error is evidence that the wholesaler is down, as opposed to an answer it gave: these count
 * towards opening the circuit breaker. An address-policy refusal is our decision, not the wholesaler's health.
 */
export function signalsOutage(e: UpstreamError): boolean {
  switch (e.reason) {
    case 'unreachable':
      return !PERMANENT_UNREACHABLE_CODES.has(e.code) && e.code !== 'TRANSPORT_CLOSED';
    case 'timeout':
      return true;
    case 'http_status':
      return OUTAGE_STATUSES.has(e.status);
    default:
      return false;
  }
}

/** One line for logs and API messages; contains no secrets (errors never hold any). */
export function describeUpstreamError(e: UpstreamError): string {
  return `wholesaler ${e.target} (${e.operation}): ${describeReason(e)}`;
}

function describeReason(e: UpstreamError): string {
  switch (e.reason) {
    case 'unreachable':
      return e.maybeDelivered
        ? `the connection broke after the request was sent (${e.code}: ${e.detail})`
        : `could not be reached (${e.code}: ${e.detail})`;
    case 'timeout':
      return `no ${TIMEOUT_WAIT[e.phase]} within ${e.timeoutMs} ms${e.maybeDelivered ? '; the request may have been delivered' : ''}`;
    case 'http_status':
      if (e.soapProblem !== undefined)
        return `answered HTTP ${e.status} with a SOAP answer that could not be decoded: ${e.soapProblem}`;
      return `answered HTTP ${e.status}${e.bodySnippet ? `: ${e.bodySnippet}` : ''}`;
    case 'credentials_rejected':
      return `rejected the MSV3 user name or password (HTTP ${e.status})`;
    case 'soap_fault': {
      const code = e.fault.errorCode ? ` ${e.fault.errorCode}` : '';
      const bean = e.fault.beanProblem === undefined ? '' : ` (${e.fault.beanProblem})`;
      return `answered with a SOAP fault (${e.fault.kind}${code}${bean}): ${e.fault.technicalText ?? e.fault.reason}`;
    }
    case 'decode':
      return `sent an answer that could not be decoded (HTTP ${e.status}): ${e.detail}`;
    case 'too_large':
      return `sent an answer larger than ${e.limitBytes} bytes`;
    case 'circuit_open':
      return `calls are paused after repeated failures; retry in ${Math.ceil(e.retryAfterMs / 1000)} s`;
    case 'overloaded':
      return OVERLOAD_CAUSES[e.cause];
    case 'shutdown':
      return e.maybeDelivered
        ? 'the gateway is shutting down and stopped waiting for the answer; the request may have been delivered'
        : 'the gateway is shutting down; the request was not sent';
  }
}

const OVERLOAD_CAUSES: Record<RefusalCause, string> = {
  queue_full: "too many calls are waiting for this wholesaler (the gateway's own limit)",
  wait_too_long: "the wait for a free slot to this wholesaler would exceed the gateway's deadline",
  wait_timeout: 'waited too long for a free slot to this wholesaler',
};

const TIMEOUT_WAIT: Record<TimeoutPhase, string> = {
  connect: 'connection',
  headers: 'response headers',
  body: 'further response data',
  total: 'complete answer',
};
