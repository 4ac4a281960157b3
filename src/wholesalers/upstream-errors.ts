import { ApiError, type ErrorBody, type ErrorKind } from '../core/errors.js';
import { sanitizeUntrustedText } from '../lib/untrusted-text.js';
import type { UpstreamError } from '../msv3/upstream-error.js';

/** Every kind `apiErrorFromUpstream` answers with. */
export const UPSTREAM_ERROR_KINDS: readonly ErrorKind[] = [
  'wholesaler_credentials_rejected',
  'endpoint_not_allowed',
  'wholesaler_unreachable',
  'wholesaler_timeout',
  'wholesaler_http_error',
  'wholesaler_unavailable',
  'wholesaler_fault',
  'wholesaler_rejected_request',
  'wholesaler_function_not_agreed',
  'wholesaler_throttled',
  'delivery_not_found',
  'wholesaler_bad_response',
  'wholesaler_circuit_open',
  'gateway_busy',
  'service_unavailable',
];

/**
 * The one mapping from a failed wholesaler call to the gateway's error vocabulary. Messages name the
 * wholesaler by the id the client used; the wholesaler's own texts travel in `upstream`. Every text the
 * wholesaler wrote passes `sanitizeUntrustedText` here, the one place it enters an error body: no
 * controls, escape sequences, bidi formatting or markup, at most 500 characters.
 */
export function apiErrorFromUpstream(error: UpstreamError, wholesaler: string): ApiError {
  const options = { wholesaler };
  switch (error.reason) {
    case 'credentials_rejected':
      return new ApiError(
        'wholesaler_credentials_rejected',
        `The wholesaler ${wholesaler} rejected the MSV3 user name or password (its HTTP ${error.status}). ` +
          'Check X-MSV3-Username and X-MSV3-Password; your API key is fine.',
        { ...options, upstream: { http_status: error.status } },
      );
    case 'unreachable':
      if (error.code === 'ADDRESS_NOT_ALLOWED') {
        return new ApiError(
          'endpoint_not_allowed',
          // Never the address it resolved to: that would map the gateway's internal DNS for the caller.
          `The endpoint of ${wholesaler} does not resolve to an address this gateway calls: public addresses, private ones only where the operator allows them, link-local and cloud metadata addresses never.`,
          options,
        );
      }
      return new ApiError(
        'wholesaler_unreachable',
        error.maybeDelivered
          ? `The connection to ${wholesaler} broke after the request was sent (${error.code}).`
          : `The wholesaler ${wholesaler} could not be reached (${error.code}).`,
        { ...options, retryAfter: DEFAULT_RETRY_AFTER_SECONDS },
      );
    case 'timeout':
      return new ApiError(
        'wholesaler_timeout',
        `The wholesaler ${wholesaler} did not answer in time (${error.phase} timeout after ${error.timeoutMs} ms, ${TIMEOUT_SETTINGS[error.phase]}).`,
        options,
      );
    case 'http_status': {
      // A status worth retrying (408, 429, 5xx) carries Retry-After: the wholesaler's own, within bounds.
      const retryAfter = !error.retryable
        ? undefined
        : error.retryAfterMs === undefined
          ? DEFAULT_RETRY_AFTER_SECONDS
          : retryAfterSeconds(error.retryAfterMs, MAX_HTTP_RETRY_AFTER_SECONDS);
      // 503 is the wholesaler saying it is unavailable (maintenance, overload): a kind of its own, 503 too.
      if (error.status === 503) {
        const seconds = retryAfter ?? DEFAULT_RETRY_AFTER_SECONDS;
        return new ApiError(
          'wholesaler_unavailable',
          `The wholesaler ${wholesaler} is unavailable (it answered HTTP 503). Retry in ${seconds} s.`,
          {
            ...options,
            retryAfter: seconds,
            upstream: {
              http_status: error.status,
              technical_text: sanitizeUntrustedText(error.bodySnippet) || undefined,
            },
          },
        );
      }
      const unreadable =
        error.soapProblem === undefined
          ? ''
          : ` with a SOAP answer that could not be decoded: ${decoderWords(error.soapProblem)}`;
      return new ApiError(
        'wholesaler_http_error',
        `The wholesaler ${wholesaler} answered HTTP ${error.status}${unreadable}.` +
          (retryAfter === undefined ? '' : ` Retry in ${retryAfter} s.`),
        {
          ...options,
          ...(retryAfter === undefined ? {} : { retryAfter }),
          upstream: {
            http_status: error.status,
            technical_text: sanitizeUntrustedText(error.bodySnippet) || undefined,
          },
        },
      );
    }
    case 'soap_fault':
      return faultError(error, wholesaler);
    case 'decode':
      return new ApiError(
        'wholesaler_bad_response',
        `The answer of ${wholesaler} could not be decoded: ${decoderWords(error.detail)}`,
        { ...options, upstream: { http_status: error.status } },
      );
    case 'too_large':
      return new ApiError(
        'wholesaler_bad_response',
        `The answer of ${wholesaler} exceeded ${error.limitBytes} bytes (UPSTREAM_MAX_RESPONSE_BYTES).`,
        { ...options, upstream: { http_status: error.status } },
      );
    case 'circuit_open': {
      const seconds = retryAfterSeconds(error.retryAfterMs);
      return new ApiError(
        'wholesaler_circuit_open',
        `Calls to ${wholesaler} are paused after repeated failures; retry in ${seconds} s.`,
        { ...options, retryAfter: seconds },
      );
    }
    case 'overloaded': {
      const seconds = retryAfterSeconds(error.retryAfterMs, 60);
      return new ApiError(
        'gateway_busy',
        error.cause === 'wait_timeout'
          ? `No slot for a call to ${wholesaler} came free in time: this gateway's own limit of calls in progress to it is taken; retry in ${seconds} s.`
          : `Too many calls to ${wholesaler} are in progress or waiting through this gateway (its own limit); retry in ${seconds} s.`,
        { ...options, retryAfter: seconds },
      );
    }
    case 'shutdown':
      // Stopped just before SHUTDOWN_TIMEOUT_MS, so the answer is still written (docs/resilience.md).
      return error.maybeDelivered
        ? new ApiError(
            'wholesaler_timeout',
            `The gateway is shutting down and stopped waiting for the answer of ${wholesaler}; the request may have reached it.`,
            { ...options, retryAfter: 1 },
          )
        : new ApiError(
            'service_unavailable',
            `The gateway is shutting down; the request was not sent to ${wholesaler}. Retry it.`,
            { ...options, retryAfter: 1 },
          );
  }
}

/**
 * The error kind `apiErrorFromUpstream` answers `error` with, without building the error (metrics label
 * every failed call with it; upstream-errors.test.ts keeps the two in step).
 */
export function upstreamErrorKind(error: UpstreamError): ErrorKind {
  switch (error.reason) {
    case 'credentials_rejected':
      return 'wholesaler_credentials_rejected';
    case 'unreachable':
      return error.code === 'ADDRESS_NOT_ALLOWED' ? 'endpoint_not_allowed' : 'wholesaler_unreachable';
    case 'timeout':
      return 'wholesaler_timeout';
    case 'http_status':
      return error.status === 503 ? 'wholesaler_unavailable' : 'wholesaler_http_error';
    case 'soap_fault':
      return FAULT_KINDS[error.fault.kind] ?? 'wholesaler_fault';
    case 'decode':
    case 'too_large':
      return 'wholesaler_bad_response';
    case 'circuit_open':
      return 'wholesaler_circuit_open';
    case 'overloaded':
      return 'gateway_busy';
    case 'shutdown':
      return error.maybeDelivered ? 'wholesaler_timeout' : 'service_unavailable';
  }
}

/** The setting behind each timeout phase, so an operator knows which one to look at. */
const TIMEOUT_SETTINGS: Record<Extract<UpstreamError, { reason: 'timeout' }>['phase'], string> = {
  connect: 'UPSTREAM_CONNECT_TIMEOUT_MS',
  headers: 'UPSTREAM_HEADERS_TIMEOUT_MS',
  body: 'UPSTREAM_BODY_TIMEOUT_MS',
  total: 'UPSTREAM_TOTAL_TIMEOUT_MS',
};

const FAULT_KINDS: Record<string, ErrorKind> = {
  AuthorizationFault: 'wholesaler_function_not_agreed',
  ValidationFault: 'wholesaler_rejected_request',
  DenialOfServiceFault: 'wholesaler_throttled',
  LieferscheinOderBarcodeUnbekanntFault: 'delivery_not_found',
};

function faultError(error: Extract<UpstreamError, { reason: 'soap_fault' }>, wholesaler: string): ApiError {
  const { fault } = error;
  const kind = FAULT_KINDS[fault.kind] ?? 'wholesaler_fault';
  const userText = fault.userText === undefined ? undefined : sanitizeUntrustedText(fault.userText);
  const text = userText ?? sanitizeUntrustedText(fault.reason);
  const upstream: NonNullable<ErrorBody['upstream']> = { kind: fault.kind, http_status: error.status };
  if (fault.errorCode !== undefined) upstream.error_code = sanitizeUntrustedText(fault.errorCode, 20);
  if (userText !== undefined) upstream.user_text = userText;
  if (fault.technicalText !== undefined) upstream.technical_text = sanitizeUntrustedText(fault.technicalText);
  // A fault whose detail is no MSV3 bean says why, so the wholesaler can be told what to fix.
  const what =
    fault.beanProblem === undefined
      ? fault.kind
      : `a SOAP fault without an MSV3 fault bean (${decoderWords(fault.beanProblem)})`;
  return new ApiError(kind, `The wholesaler ${wholesaler} answered with ${what}: ${text}`, {
    wholesaler,
    upstream,
    ...(kind === 'wholesaler_throttled' ? { retryAfter: 30 } : {}),
  });
}

/**
 * The decoder's words, safe for an error body. They name elements as tags (`found <m:Menge> in …`),
 * which `sanitizeUntrustedText` would take for markup and drop, leaving the sentence without its
 * subject: those are written as quoted names first (`'m:Menge'`).
 */
function decoderWords(detail: string): string {
  return sanitizeUntrustedText(detail.replace(ELEMENT_TAG, "'$1$2'"));
}

/**
 * `<name>`, `</name>` or `<name/>` with an XML name (or one the decoder shortened with `…`); never
 * `script` or `style`, which the sanitizer removes with their content.
 */
const ELEMENT_TAG = /<(?!\/?(?:script|style)\b)(\/?[A-Za-z_][\w.:…-]*)(\/?)>/gi;

/** An unreachable wholesaler, or an HTTP error without a hint of its own: ask again in a few seconds. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;
/** A wholesaler's hint beyond this (a day's maintenance, a bad header) is capped: clients ask again then. */
const MAX_HTTP_RETRY_AFTER_SECONDS = 600;

/** A wait in milliseconds as Retry-After: whole seconds, rounded up, at least 1, at most `maxSeconds`. */
function retryAfterSeconds(ms: number, maxSeconds = Number.POSITIVE_INFINITY): number {
  return Math.min(maxSeconds, Math.max(1, Math.ceil(ms / 1000)));
}
