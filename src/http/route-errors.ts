import type { FastifySchema } from 'fastify';
import { ERROR_CATALOGUE, type ErrorKind } from '../core/errors.js';

/**
 * Each route's errors, declared once in its `config.errors` (docs/errors.md): the list gives the route's
 * description its "Errors:" sentence, the OpenAPI document one response per status (with the error kinds,
 * an example each and Retry-After where it applies), and the error handler the kinds it expects, so
 * one it does not expect is logged. Kinds every route of a kind can answer are implied, not listed:
 * see `impliedErrors`.
 */
export interface RouteErrors {
  /** The route's own kinds, in the order the description names them. */
  readonly kinds: readonly ErrorKind[];
  /** A few words per kind where the catalogue's meaning is not enough for this route. */
  readonly notes: Partial<Record<ErrorKind, string>>;
}

/** A route's own errors; `notes` say what a kind means for this route, where that helps. */
export function routeErrors(
  kinds: readonly (ErrorKind | readonly ErrorKind[])[],
  notes: Partial<Record<ErrorKind, string>> = {},
): RouteErrors {
  return { kinds: [...new Set(kinds.flat())], notes };
}

/** What any call to a wholesaler can end in (src/wholesalers/upstream-errors.ts). */
export const WHOLESALER_CALL_ERRORS: readonly ErrorKind[] = [
  'endpoint_not_allowed', // a custom wholesaler's host now resolves to a refused address
  'wholesaler_credentials_missing',
  'wholesaler_credentials_rejected',
  'wholesaler_not_found',
  'wholesaler_function_not_agreed',
  'wholesaler_rejected_request',
  'wholesaler_unreachable',
  'wholesaler_fault',
  'wholesaler_http_error',
  'wholesaler_unavailable',
  'wholesaler_bad_response',
  'wholesaler_throttled',
  'gateway_busy',
  'wholesaler_circuit_open',
  'wholesaler_timeout',
];

/** What every call of an MSV3 v2-only operation can end in. */
export const V2_CALL_ERRORS: readonly ErrorKind[] = ['operation_not_supported', ...WHOLESALER_CALL_ERRORS];

/** What a request with an Idempotency-Key can end in (src/http/idempotency.ts). */
const IDEMPOTENCY_ERRORS: readonly ErrorKind[] = [
  'invalid_idempotency_key',
  'idempotency_key_reused',
  'idempotency_request_in_progress',
];

/** The kinds any route can answer, whatever it declares: the request never reached it, or the gateway failed. */
export const ANY_ROUTE_ERRORS: readonly ErrorKind[] = [
  'request_headers_too_large',
  'request_timeout',
  'internal_error',
];

/** The shape of a route, as far as its implied errors go. */
export interface RouteShape {
  /** Needs an API key (every route but health, docs and metrics). */
  keyed: boolean;
  /**
   * Parses a body: it has a body schema, or its method carries one (Fastify parses what a POST, PUT,
   * PATCH or DELETE sends, schema or not, so such a body can be malformed, too large or not JSON).
   */
  body: boolean;
  /** Has a body, query, path or header schema that can refuse a value. */
  validated: boolean;
  /** Takes an Idempotency-Key (`config.idempotent`). */
  idempotent: boolean;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A route's shape from its options and method (see `impliedErrors`). */
export function routeShape(
  schema: FastifySchema | undefined,
  config: { public?: boolean; idempotent?: boolean } | undefined,
  method: string,
): RouteShape {
  return {
    keyed: config?.public !== true,
    idempotent: config?.idempotent === true,
    body: schema?.body !== undefined || BODY_METHODS.has(method.toUpperCase()),
    validated: [schema?.body, schema?.querystring, schema?.params, schema?.headers].some(
      (s) => s !== undefined,
    ),
  };
}

/**
 * Kinds a route answers because of what it is, not what it does: a keyed route checks the key (in the
 * database, hence 503) and the rate limit; a body can be malformed, too large or not JSON; any schema
 * can refuse a value; an Idempotency-Key can be malformed, reused or busy.
 */
export function impliedErrors(shape: RouteShape): ErrorKind[] {
  const kinds: ErrorKind[] = [];
  if (shape.validated || shape.body) kinds.push('invalid_request');
  if (shape.body) kinds.push('malformed_json', 'unsupported_media_type', 'payload_too_large');
  if (shape.keyed) kinds.push('api_key_missing', 'api_key_invalid', 'rate_limited', 'service_unavailable');
  if (shape.idempotent) kinds.push(...IDEMPOTENCY_ERRORS);
  return kinds;
}

/** Every kind a route may answer: its own, the implied ones, and those of any route. */
export function allowedErrors(declared: RouteErrors | undefined, shape: RouteShape): Set<ErrorKind> {
  return new Set([...(declared?.kinds ?? []), ...impliedErrors(shape), ...ANY_ROUTE_ERRORS]);
}

/** What some kinds mean wherever they occur, unless a route says more. */
const USUAL_NOTES: Partial<Record<ErrorKind, string>> = {
  wholesaler_credentials_rejected:
    'the wholesaler refused X-MSV3-Username/X-MSV3-Password; your API key is fine',
  wholesaler_fault: "the wholesaler's texts in `upstream`",
  wholesaler_throttled: "the wholesaler's DenialOfServiceFault",
  gateway_busy: "this gateway's own limit of calls to the wholesaler is taken; see Retry-After",
};

/**
 * The description's sentence: "Errors: 404 `order_not_found`, 422 `order_rejected` (…), …." Implied kinds
 * appear only where the route has a note on them.
 */
export function errorsSentence(
  declared: RouteErrors,
  shape: Pick<RouteShape, 'idempotent' | 'keyed'>,
): string {
  const { idempotent, keyed } = shape;
  const notes = { ...USUAL_NOTES, ...declared.notes };
  const named = new Set([
    ...(Object.keys(declared.notes) as ErrorKind[]),
    ...declared.kinds,
    ...(idempotent ? IDEMPOTENCY_ERRORS : []),
  ]);
  const parts = [...named]
    .sort((a, b) => ERROR_CATALOGUE[a].status - ERROR_CATALOGUE[b].status)
    .map((kind) => {
      const note = notes[kind];
      return `${ERROR_CATALOGUE[kind].status} \`${kind}\`${note === undefined ? '' : ` (${note})`}`;
    });
  if (!keyed) return `Errors: ${parts.join(', ')}.`;
  const common =
    'and those of every route (400 `invalid_request`, 401 API key, 429 `rate_limited`, 503 `service_unavailable`)';
  return parts.length === 0 ? `Errors: ${common.slice(4)}.` : `Errors: ${parts.join(', ')}, ${common}.`;
}

/**
 * Kinds whose answers carry Retry-After, always or where retrying helps: a conflict about a delivery in
 * progress, an unreachable wholesaler, its HTTP 408, 429 or 5xx (503: unavailable), a timeout cut by
 * shutdown, an open outcome.
 */
export const RETRY_AFTER_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'rate_limited',
  'gateway_busy',
  'idempotency_request_in_progress',
  'conflict',
  'wholesaler_throttled',
  'wholesaler_circuit_open',
  'service_unavailable',
  'wholesaler_unreachable',
  'wholesaler_http_error',
  'wholesaler_unavailable',
  'wholesaler_timeout',
  'order_outcome_unknown',
  'return_outcome_unknown',
]);
