import type { ErrorBody, ErrorKind } from './generated/api.js';

/**
 * An error answer of the gateway: `kind` is one of the catalogue's error kinds (docs/error-catalogue.md),
 * `requestId` the `X-Request-Id` to quote to support. `idempotencyKey` is the key the request carried:
 * a retry later with the same key is what the idempotency rules expect after `order_outcome_unknown`.
 */
export class GatewayError<Kind extends ErrorKind = ErrorKind> extends Error {
  override readonly name = 'GatewayError';
  readonly kind: Kind;
  readonly status: number;
  readonly requestId: string;
  readonly errorCode: string;
  readonly wholesaler: string | null;
  /** The offending field, e.g. `items[3].pzn`. */
  readonly param: string | undefined;
  /** With `order_outcome_unknown`: the gateway order that was sent. */
  readonly orderId: string | undefined;
  /** Seconds from the `Retry-After` header, when the answer had one. */
  readonly retryAfterSeconds: number | undefined;
  readonly idempotencyKey: string | undefined;
  readonly body: ErrorBody & { error: Kind };

  constructor(
    status: number,
    body: ErrorBody & { error: Kind },
    details: { retryAfterSeconds?: number | undefined; idempotencyKey?: string | undefined } = {},
  ) {
    super(body.message);
    this.kind = body.error;
    this.status = status;
    this.requestId = body.request_id;
    this.errorCode = body.error_code;
    this.wholesaler = body.wholesaler;
    this.param = body.param;
    this.orderId = body.order_id;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.idempotencyKey = details.idempotencyKey;
    this.body = body;
  }
}

/**
 * No answer arrived (connection refused or dropped, or an answer that is not the gateway's), after the
 * retries the idempotency rules allow. With an `idempotencyKey`, sending the same request with that key
 * later is safe: it is never carried out twice.
 */
export class GatewayConnectionError extends Error {
  override readonly name = 'GatewayConnectionError';
  constructor(
    message: string,
    readonly attempts: number,
    readonly idempotencyKey: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Narrows to a `GatewayError`, of the given kinds when any are named. */
export function isGatewayError<Kind extends ErrorKind>(
  error: unknown,
  ...kinds: Kind[]
): error is GatewayError<Kind> {
  return error instanceof GatewayError && (kinds.length === 0 || kinds.includes(error.kind as Kind));
}
