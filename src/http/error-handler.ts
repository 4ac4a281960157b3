import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, type ErrorKind, isApiError, unexpectedError } from '../core/errors.js';
import { newRequestId } from '../lib/ids.js';
import { databaseErrorToApiError } from '../store/database-unavailable.js';
import { setIdempotencyOutcome } from './idempotency.js';
import { requestIdFor } from './request-id.js';
import { noteErrorKind } from './request-notes.js';
import { allowedErrors, routeShape } from './route-errors.js';
import type { GatewayApp } from './types.js';
import { describeSchemaErrors, type RequestPart, type SchemaError } from './validation.js';

/** Fastify's router refuses longer path parameters (its default `maxParamLength`). */
export const MAX_PARAM_LENGTH = 100;

/** One error handler and one not-found handler: every 4xx/5xx leaves as the uniform error body. */
export function installErrorHandling(app: GatewayApp, options: { bodyLimitBytes: number }): void {
  app.setErrorHandler((error, request, reply) => {
    // A static docs file outside its folder (`/docs/static/%2e%2e/…`): there is no such file for anyone.
    if (!isApiError(error) && (error as Partial<FastifyError>).statusCode === 403)
      return sendApiError(request, reply, routeNotFound(request));
    let apiError = toApiError(error, options);
    if (apiError.options.wholesaler === undefined) {
      const wholesaler = wholesalerNamedIn(request);
      if (wholesaler !== undefined)
        apiError = new ApiError(apiError.kind, apiError.message, { ...apiError.options, wholesaler });
    }
    if (apiError.options.idempotencyKey !== undefined)
      setIdempotencyOutcome(request, apiError.options.idempotencyKey);
    if (!isDeclared(request, apiError.kind)) {
      request.log.error({ error_kind: apiError.kind }, UNDECLARED_ERROR);
    }
    if (apiError.kind === 'internal_error') request.log.error({ err: error }, 'unexpected error');
    // Load shedding (gateway_busy) is no fault to look into: its request line (503) says enough, and a
    // warning with a stack trace for each refusal would cost the CPU the overload needs most.
    else if (apiError.status >= 500 && apiError.kind !== 'gateway_busy')
      request.log.warn({ err: error }, apiError.message);
    return sendApiError(request, reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => sendApiError(request, reply, routeNotFound(request)));
}

/** Logged when a route answers an error kind its `config.errors` does not declare: the docs are wrong. */
export const UNDECLARED_ERROR = 'error kind not declared for this route (src/http/route-errors.ts)';

/** Whether the route declared `kind` (or implies it); routes that declare nothing are not checked. */
function isDeclared(request: FastifyRequest, kind: ErrorKind): boolean {
  const { config, schema } = request.routeOptions;
  if (config.errors === undefined) return true;
  return allowedErrors(config.errors, routeShape(schema, config, request.method)).has(kind);
}

function routeNotFound(request: FastifyRequest): ApiError {
  const path = request.url.split('?', 1)[0];
  return new ApiError('route_not_found', `No route ${request.method} ${path}.`);
}

/**
 * Fastify's `frameworkErrors`: URLs its router refuses before any route or hook runs (a malformed
 * percent-encoding, a path parameter longer than the router's limit). Answered in the uniform shape,
 * with the request id header and the one log line that the hooks would otherwise have written.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `A path parameter is longer than ${MAX_PARAM_LENGTH} characters.`
      : error.code === 'FST_ERR_BAD_URL'
        ? 'The URL path contains a malformed percent-encoding.'
        : 'The request could not be routed.';
  reply.header('x-request-id', request.id);
  void sendApiError(request, reply, new ApiError('invalid_request', message));
  request.log.info(
    { req: request, res: reply, duration_ms: 0, error_kind: 'invalid_request' },
    'request completed',
  );
}

/**
 * The wholesaler id a rejected request names in its body or query (docs/error-catalogue.md "Error catalogue": the
 * error names the wholesaler involved), when it is a plain id; an id that is itself invalid is not repeated.
 */
function wholesalerNamedIn(request: FastifyRequest): string | undefined {
  for (const part of [request.body, request.query]) {
    const named = (part as { wholesaler?: unknown } | null | undefined)?.wholesaler;
    if (typeof named === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$/.test(named)) return named;
  }
  return undefined;
}

export function sendApiError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  noteErrorKind(request, error.kind);
  if (error.options.retryAfter !== undefined) reply.header('retry-after', String(error.options.retryAfter));
  for (const [name, value] of Object.entries(error.options.headers ?? {})) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody(request.id));
}

const FASTIFY_CODES: Record<string, ErrorKind> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
};

const STATUS_KINDS: Record<number, ErrorKind> = {
  400: 'invalid_request',
  404: 'route_not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/**
 * Maps anything thrown (ours, Fastify's, a bug) to an `ApiError`: an unavailable database (PostgreSQL or
 * SQLite, see `isDatabaseUnavailable`) becomes 503 with Retry-After, other unknown errors a bare 500.
 */
function toApiError(error: unknown, options: { bodyLimitBytes: number }): ApiError {
  if (isApiError(error)) return error;
  const e = error as Partial<FastifyError> & { validation?: SchemaError[]; validationContext?: RequestPart };
  if (Array.isArray(e.validation)) {
    const { message, param } = describeSchemaErrors(e.validation, e.validationContext ?? 'body');
    return new ApiError('invalid_request', message, param === undefined ? {} : { param });
  }
  const kind =
    (e.code === undefined ? undefined : FASTIFY_CODES[e.code]) ?? STATUS_KINDS[e.statusCode ?? 500];
  switch (kind) {
    case 'malformed_json':
      return new ApiError(kind, 'The request body is not valid JSON.');
    case 'payload_too_large':
      return new ApiError(kind, `The request body exceeds the limit of ${options.bodyLimitBytes} bytes.`);
    case 'unsupported_media_type':
      return new ApiError(kind, 'Send the request body as application/json.');
    case undefined:
      return databaseErrorToApiError(error) ?? unexpectedError(error);
    default:
      // Fastify's own 4xx messages describe the request, never internals.
      return new ApiError(kind, e.message ?? 'The request is invalid.');
  }
}

/** Requests Node cannot even parse never reach Fastify; answer them in the same shape. */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy(error);
    return;
  }
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('request_headers_too_large', 'The request headers are too large.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'The request was not received completely in time.')
        : new ApiError('invalid_request', 'The HTTP request could not be parsed.');
  endWithApiError(socket, apiError, newRequestId());
}

/** The methods the gateway's routes answer (the `Allow` of a refused CONNECT). */
const SERVED_METHODS = 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT';

/**
 * The HTTP server's 'connect' listener. Node hands a CONNECT request (a proxy tunnel) to this event
 * and, without a listener, destroys the socket with no answer at all; the gateway is no proxy, so it
 * answers 405 in the uniform shape and closes. (Requests with `Upgrade` need no such listener: without
 * one Node passes them to Fastify like any other request.)
 */
export function refuseConnect(log: Logger): (request: IncomingMessage, socket: Duplex) => void {
  return (request, socket) => {
    // Node removed its own listeners from the socket: an error now must not crash the process.
    socket.on('error', () => socket.destroy());
    const requestId = requestIdFor(request);
    const apiError = new ApiError(
      'method_not_allowed',
      'CONNECT is not supported: the gateway is not a proxy.',
      { headers: { allow: SERVED_METHODS } },
    );
    endWithApiError(socket, apiError, requestId);
    log.info(
      { request_id: requestId, method: 'CONNECT', status_code: apiError.status },
      'CONNECT request refused',
    );
  };
}

/** Writes a whole error response on a socket that Fastify does not own, then closes it. */
function endWithApiError(socket: Duplex, apiError: ApiError, requestId: string): void {
  const body = JSON.stringify(apiError.toBody(requestId));
  const headers = Object.entries(apiError.options.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${apiError.status} ${REASONS[apiError.status] ?? 'Bad Request'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      headers +
      'Connection: close\r\n\r\n' +
      body,
  );
  // A client that never closes its side must not keep the socket open.
  setTimeout(() => socket.destroy(), 5_000).unref();
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
