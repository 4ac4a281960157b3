import type { Clock } from '../lib/clock.js';
import { parseRetryAfter } from '../lib/retry-after.js';
import { decodeAnswer, errorSnippet, looksLikeSoap, scrub } from './answer-text.js';
import type { Credentials } from './credentials.js';
import type { DeviationName } from './deviations.js';
import type { DecodeResult, Msv3Fault } from './result.js';
import type { RawFailure, RawOutcome, RawResponse } from './transport-exchange.js';
import {
  faultMayFollowProcessing,
  type TimeoutPhase,
  type UpstreamError,
  type UpstreamErrorFields,
  upstreamError,
} from './upstream-error.js';

/** Turns what came back over the wire into a value or an `UpstreamError`. */

export interface CallContext {
  target: string;
  operation: string;
  /** Scrubbed from anything the wholesaler sent back before it goes into an error (it might echo them). */
  secrets: string[];
  /** Reads an HTTP-date Retry-After against it. */
  clock: Clock;
}

export interface TimeoutSettings {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

export type Interpreted<T> =
  | { ok: true; value: T; status: number; deviations?: readonly DeviationName[] }
  | { ok: false; error: UpstreamError };

export function interpretResponse<T>(
  response: RawResponse,
  decode: (xml: string) => DecodeResult<T>,
  context: CallContext,
): Interpreted<T> {
  const { target, operation } = context;
  const { status } = response;
  const fail = (fields: UpstreamErrorFields): Interpreted<T> => ({ ok: false, error: upstreamError(fields) });

  if (status === 401 || status === 403) {
    const challenge =
      response.challenge === undefined ? {} : { challenge: scrub(response.challenge, context.secrets) };
    return fail({
      reason: 'credentials_rejected',
      target,
      operation,
      maybeDelivered: false,
      status,
      ...challenge,
    });
  }
  const success = status >= 200 && status < 300;
  // Why a non-2xx answer that looks like SOAP could not be read, for its http_status error.
  let soapProblem: string | undefined;
  // SOAP 1.2 servers send faults with 400 or 500; a non-2xx answer is decoded only if it is an envelope.
  if (success || looksLikeSoap(response.contentType, response.body)) {
    const decoded = decodeAnswer(response.body, decode);
    if (decoded.kind === 'fault') {
      const fault = scrubFault(decoded.fault, context.secrets);
      const maybeDelivered = faultMayFollowProcessing(fault);
      return fail({ reason: 'soap_fault', target, operation, maybeDelivered, status, fault });
    }
    if (success && decoded.kind === 'ok') {
      const { value, deviations } = decoded;
      return deviations === undefined ? { ok: true, value, status } : { ok: true, value, status, deviations };
    }
    if (success) {
      const detail = scrub(decoded.kind === 'invalid' ? decoded.error.message : '', context.secrets);
      return fail({
        reason: 'decode',
        target,
        operation,
        maybeDelivered: true,
        status,
        detail: detail.slice(0, 1_000),
      });
    }
    if (decoded.kind === 'invalid')
      soapProblem = scrub(decoded.error.message, context.secrets).slice(0, 1_000);
  }
  return { ok: false, error: httpStatusError(response, context, soapProblem) };
}

/**
 * A probe is anonymous, so an MSV3 server answers 401: any answer below 500 means "up". A 5xx only counts as up
 * when the SOAP stack produced it (a fault, e.g. about the missing credentials), not a proxy in front of a
 * dead backend.
 */
export function interpretProbe(
  outcome: RawOutcome,
  context: CallContext,
  timeouts: TimeoutSettings,
): { up: boolean; status?: number; error?: UpstreamError } {
  if (outcome.kind === 'too_large') return { up: true, status: outcome.status };
  if (outcome.kind !== 'response') return { up: false, error: failureToError(outcome, context, timeouts) };
  if (outcome.status < 500 || looksLikeSoap(outcome.contentType, outcome.body))
    return { up: true, status: outcome.status };
  return { up: false, status: outcome.status, error: httpStatusError(outcome, context) };
}

function httpStatusError(response: RawResponse, context: CallContext, soapProblem?: string): UpstreamError {
  const contentType =
    response.contentType === undefined ? {} : { contentType: response.contentType.slice(0, 100) };
  const retryAfterMs = parseRetryAfter(response.retryAfter, context.clock.now());
  const retryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };
  const problem = soapProblem === undefined ? {} : { soapProblem };
  return upstreamError({
    reason: 'http_status',
    target: context.target,
    operation: context.operation,
    // A 5xx may come after the wholesaler's backend booked the request; 3xx/4xx are refusals up front.
    maybeDelivered: response.status >= 500,
    status: response.status,
    bodySnippet: errorSnippet(response.body, context.secrets),
    ...contentType,
    ...retryAfter,
    ...problem,
  });
}

export function failureToError(
  failure: RawFailure,
  context: CallContext,
  timeouts: TimeoutSettings,
): UpstreamError {
  const { target, operation } = context;
  switch (failure.kind) {
    case 'closed':
      return upstreamError({
        reason: 'unreachable',
        target,
        operation,
        maybeDelivered: false,
        code: 'TRANSPORT_CLOSED',
        detail: 'the transport is closed',
      });
    case 'deadline': {
      const { timeoutMs, sent } = failure;
      return upstreamError({
        reason: 'timeout',
        target,
        operation,
        phase: 'total',
        timeoutMs,
        maybeDelivered: sent,
      });
    }
    case 'stopped':
      return upstreamError({ reason: 'shutdown', target, operation, maybeDelivered: failure.sent });
    case 'too_large': {
      const { status, limitBytes } = failure;
      return upstreamError({
        reason: 'too_large',
        target,
        operation,
        maybeDelivered: true,
        status,
        limitBytes,
      });
    }
    case 'failed':
      return transportFailureToError(failure.error, failure.sent, context, timeouts);
  }
}

const TIMEOUT_PHASES: Record<string, Exclude<TimeoutPhase, 'total'>> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'headers',
  UND_ERR_BODY_TIMEOUT: 'body',
};

/** Maps an undici or socket error to `timeout` or `unreachable`. */
export function transportFailureToError(
  error: unknown,
  sent: boolean,
  context: Pick<CallContext, 'target' | 'operation'>,
  timeouts: TimeoutSettings,
): UpstreamError {
  const { target, operation } = context;
  const code = errorCode(error);
  const phase = TIMEOUT_PHASES[code];
  if (phase) {
    const timeoutMs = timeouts[`${phase}TimeoutMs`];
    // The headers and body timers only run once the request has been written.
    const maybeDelivered = phase !== 'connect';
    return upstreamError({ reason: 'timeout', target, operation, phase, timeoutMs, maybeDelivered });
  }
  const detail = (error instanceof Error ? error.message : String(error)).slice(0, 200) || code;
  return upstreamError({ reason: 'unreachable', target, operation, maybeDelivered: sent, code, detail });
}

function errorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'UNKNOWN';
  const { code, errors, name } = error as { code?: unknown; errors?: unknown; name?: unknown };
  if (typeof code === 'string') return code;
  // Happy-eyeballs connection attempts fail with an AggregateError of the per-address errors.
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
  return typeof name === 'string' ? name : 'UNKNOWN';
}

export function secretsOf(credentials: Credentials, authorization: string): string[] {
  const secrets = [authorization.slice('Basic '.length), credentials.password];
  return secrets.filter((secret) => secret.length > 0);
}

function scrubFault(fault: Msv3Fault, secrets: string[]): Msv3Fault {
  const scrubbed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fault)) {
    scrubbed[key] = typeof value === 'string' ? scrub(value, secrets) : value;
  }
  return scrubbed as unknown as Msv3Fault;
}
