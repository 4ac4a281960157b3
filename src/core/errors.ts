/**
 * The gateway's closed error vocabulary: every 4xx/5xx body names one of these kinds.
 * `error_code` values are stable (clients may switch on them); add new kinds at the end of a group,
 * never renumber. docs/error-catalogue.md and the OpenAPI document list this table; both are generated from it.
 */
export const ERROR_CATALOGUE = {
  // 10xx: the request itself is wrong
  invalid_request: { code: '1000', status: 400, description: 'The body, query or path breaks the schema.' },
  malformed_json: { code: '1001', status: 400, description: 'The body is not valid JSON.' },
  wholesaler_credentials_missing: {
    code: '1002',
    status: 400,
    description:
      'X-MSV3-Username or X-MSV3-Password is missing or malformed, or X-MSV3-Credentials has no valid member for a wholesaler of the request.',
  },
  invalid_idempotency_key: {
    code: '1003',
    status: 400,
    description: 'The Idempotency-Key header is malformed.',
  },
  endpoint_not_allowed: {
    code: '1004',
    status: 400,
    description: 'A URL points to a private, loopback or link-local address, or is not https in live mode.',
  },
  unsupported_media_type: { code: '1005', status: 415, description: 'The body is not application/json.' },
  payload_too_large: {
    code: '1006',
    status: 413,
    description: 'The body exceeds the configured size limit.',
  },
  route_not_found: { code: '1007', status: 404, description: 'No such path.' },
  method_not_allowed: {
    code: '1008',
    status: 405,
    description:
      'The path exists, but not for this method (or the method is CONNECT: the gateway is no proxy).',
  },
  request_headers_too_large: {
    code: '1009',
    status: 431,
    description: 'The request headers exceed what the server accepts.',
  },
  request_timeout: {
    code: '1010',
    status: 408,
    description: 'The request was not received completely in time.',
  },

  // 11xx: who is calling
  api_key_missing: { code: '1100', status: 401, description: 'The X-API-Key header is missing.' },
  api_key_invalid: {
    code: '1101',
    status: 401,
    description: 'The API key is malformed, unknown or revoked.',
  },
  wholesaler_credentials_rejected: {
    code: '1102',
    status: 401,
    description: 'The wholesaler rejected the MSV3 user name or password (its HTTP 401/403).',
  },
  wholesaler_function_not_agreed: {
    code: '1103',
    status: 403,
    description:
      "The customer's contract with the wholesaler does not include this function (MSV3 AuthorizationFault).",
  },
  live_mode_required: { code: '1104', status: 403, description: 'The operation needs a live API key.' },
  metrics_token_invalid: {
    code: '1105',
    status: 401,
    description:
      'GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>` (it is missing or wrong), or, when no token is set, a caller on the same host.',
  },
  test_mode_required: {
    code: '1106',
    status: 403,
    description: 'The operation needs a test API key: test helpers act on the sandbox only.',
  },
  status_token_invalid: {
    code: '1107',
    status: 401,
    description:
      'The operator status page needs `STATUS_PAGE_TOKEN` (as the password of HTTP Basic, or `Authorization: Bearer <token>`); it is missing or wrong. An API key does not open it.',
  },

  // 12xx: what is asked for does not exist
  wholesaler_not_found: { code: '1200', status: 404, description: 'Unknown wholesaler id for this account.' },
  order_not_found: { code: '1201', status: 404, description: 'Unknown gateway order id for this account.' },
  delivery_not_found: {
    code: '1202',
    status: 404,
    description: 'The wholesaler knows no delivery note with that number or barcode.',
  },
  document_not_found: {
    code: '1203',
    status: 404,
    description: 'The wholesaler has no document with that id.',
  },
  webhook_not_found: {
    code: '1204',
    status: 404,
    description: 'Unknown webhook subscription for this account.',
  },
  resource_not_found: { code: '1205', status: 404, description: 'Unknown resource id for this account.' },

  // 13xx: valid request, but it cannot be carried out
  operation_not_supported: {
    code: '1300',
    status: 422,
    description:
      "The wholesaler's MSV3 version lacks this operation (v1 has no delivery notices, returns or documents).",
  },
  order_rejected: {
    code: '1301',
    status: 422,
    description: 'The wholesaler rejected the order (Auftragsfehler).',
  },
  idempotency_key_reused: {
    code: '1302',
    status: 422,
    description: 'The Idempotency-Key was already used with a different request.',
  },
  idempotency_request_in_progress: {
    code: '1303',
    status: 409,
    description: 'A request with this Idempotency-Key is still being processed; retry later.',
  },
  wholesaler_rejected_request: {
    code: '1304',
    status: 422,
    description: 'The wholesaler refused the request as invalid (MSV3 ValidationFault).',
  },
  conflict: {
    code: '1305',
    status: 409,
    description: 'The request conflicts with the current state of the resource.',
  },
  order_type_not_agreed: {
    code: '1306',
    status: 422,
    description:
      "The order type (batch, special or shipping) is not part of the customer's contract with the wholesaler (`Vereinbart`); checked before anything is sent.",
  },
  order_labels_exceeded: {
    code: '1307',
    status: 422,
    description:
      "More order labels of the client's own choosing for one order type than the contract allows (`MaxAnzahlFreieAuftragskennungen`); checked before anything is sent.",
  },
  complete_containers_only: {
    code: '1308',
    status: 422,
    description:
      'The wholesaler ships complete containers only (`NurKompletteGebinde`): a shipping container must belong to one sub-order and allow no later delivery; checked before anything is sent.',
  },

  // 14xx: throttling
  rate_limited: {
    code: '1400',
    status: 429,
    description:
      "The API key's request budget, or the client address's budget of failed API key attempts, is spent; see Retry-After.",
  },
  wholesaler_throttled: {
    code: '1401',
    status: 503,
    description: 'The wholesaler refused the request for load reasons (MSV3 DenialOfServiceFault).',
  },
  wholesaler_circuit_open: {
    code: '1402',
    status: 503,
    description:
      'The wholesaler failed repeatedly; calls are paused until the cool-down ends (see Retry-After).',
  },
  gateway_busy: {
    code: '1403',
    status: 503,
    description:
      "The gateway's own limit of calls in progress to this wholesaler is taken and its wait queue full (UPSTREAM_MAX_CONCURRENCY); retry after Retry-After.",
  },

  // 15xx: the wholesaler failed
  wholesaler_unreachable: {
    code: '1500',
    status: 502,
    description: 'The wholesaler endpoint could not be reached.',
  },
  wholesaler_fault: { code: '1501', status: 502, description: 'The wholesaler answered with a SOAP fault.' },
  wholesaler_http_error: {
    code: '1502',
    status: 502,
    description:
      "The wholesaler answered with an HTTP error status (503 is `wholesaler_unavailable`); for 408, 429 and 5xx, Retry-After says when to try again (the wholesaler's own, capped at 600 s, else 5 s).",
  },
  wholesaler_bad_response: {
    code: '1503',
    status: 502,
    description: 'The wholesaler answer could not be decoded or was too large.',
  },
  wholesaler_timeout: {
    code: '1504',
    status: 504,
    description:
      'The wholesaler did not answer in time (see the UPSTREAM_*_TIMEOUT_MS settings; a whole call ends after UPSTREAM_TOTAL_TIMEOUT_MS).',
  },
  order_outcome_unknown: {
    code: '1505',
    status: 504,
    description:
      'The order was sent but its outcome could not be confirmed; retry with the same Idempotency-Key to reconcile.',
  },
  return_outcome_unknown: {
    code: '1506',
    status: 504,
    description:
      'A return announcement or take-back offer was sent but its answer was lost; retry with the same Idempotency-Key to get the answer without announcing twice.',
  },
  wholesaler_unavailable: {
    code: '1507',
    status: 503,
    description:
      "The wholesaler answered HTTP 503: it is down for maintenance or cannot serve now; Retry-After is the wholesaler's own (capped at 600 s), else 5 s.",
  },

  // 19xx: the gateway failed
  internal_error: {
    code: '1900',
    status: 500,
    description: 'Unexpected error; quote the request id to support.',
  },
  service_unavailable: {
    code: '1901',
    status: 503,
    description: 'The gateway is shutting down or a dependency (database) is unavailable.',
  },
} as const satisfies Record<string, { code: string; status: number; description: string }>;

export type ErrorKind = keyof typeof ERROR_CATALOGUE;

export interface ErrorBody {
  error: ErrorKind;
  message: string;
  wholesaler: string | null;
  error_code: string;
  request_id: string;
  param?: string;
  /** The gateway order an `order_outcome_unknown` is about: ask its status, or retry with the same key. */
  order_id?: string;
  /** Wholesaler texts from an MSV3 fault or Auftragsfehler, when there is one. */
  upstream?: {
    kind?: string;
    error_code?: string;
    user_text?: string;
    technical_text?: string;
    http_status?: number;
  };
}

export interface ApiErrorOptions {
  wholesaler?: string | null;
  param?: string;
  orderId?: string;
  upstream?: ErrorBody['upstream'];
  /** Seconds, sent as Retry-After. */
  retryAfter?: number;
  headers?: Record<string, string>;
  cause?: unknown;
  /**
   * What becomes of the request's Idempotency-Key when this error answers it, decided by the service
   * that knows (e.g. the order placement, the binding return calls); without it, the rule by kind
   * (`defaultOutcome`, core/idempotency-outcome.ts).
   */
  idempotencyKey?: IdempotencyOutcome;
}

/**
 * What happens to a request's Idempotency-Key once the request is answered (docs/idempotency.md):
 * `store` – the outcome is final; later requests with the key get it replayed.
 * `release` – nothing happened (the request was refused, or failed before anything could take effect);
 *   the key is forgotten, so the client may fix the request and send it again with the same key.
 * `reopen` – the outcome is open (an order may or may not have been placed); the key keeps its
 *   fingerprint, and the next identical request takes over at once and settles it.
 */
export type IdempotencyOutcome = 'store' | 'release' | 'reopen';

/** Thrown anywhere below the routes; the error handler turns it into the uniform body. */
export class ApiError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly options: ApiErrorOptions;

  constructor(kind: ErrorKind, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.kind = kind;
    this.status = ERROR_CATALOGUE[kind].status;
    this.options = options;
  }

  toBody(requestId: string): ErrorBody {
    const body: ErrorBody = {
      error: this.kind,
      message: this.message,
      wholesaler: this.options.wholesaler ?? null,
      error_code: ERROR_CATALOGUE[this.kind].code,
      request_id: requestId,
    };
    if (this.options.param !== undefined) body.param = this.options.param;
    if (this.options.orderId !== undefined) body.order_id = this.options.orderId;
    if (this.options.upstream !== undefined) body.upstream = this.options.upstream;
    return body;
  }
}

/** 500 `internal_error` for anything thrown that nobody expected: `cause` is logged, never shown. */
export function unexpectedError(cause: unknown): ApiError {
  return new ApiError('internal_error', 'An unexpected error occurred; quote the request id to support.', {
    cause,
  });
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

/** The `error` kind of an answer's serialized body (as `sendApiError` writes it), for hooks that see only bytes. */
export function errorKindOf(status: number, payload: unknown): string | undefined {
  if (status < 400 || typeof payload !== 'string') return undefined;
  try {
    const parsed = JSON.parse(payload) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}
