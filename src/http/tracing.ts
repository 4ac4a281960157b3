import type { FastifyRequest } from 'fastify';
import { errorKindOf } from '../core/errors.js';
import type { RequestSpan, Tracing } from '../observability/tracing.js';
import { KNOWN_METHODS } from './observe.js';
import type { GatewayApp } from './types.js';

/**
 * A server span per request (docs/tracing.md), named by route pattern (`POST /v1/orders`), continuing the
 * caller's W3C `traceparent`. Its trace id goes back in the `traceresponse` header and onto every log
 * line of the request (`trace_id`). Route handlers run inside the span, so the wholesaler calls they
 * make become its children (`wholesalers/call-span.ts`). Installed before the other `onRequest`
 * hooks, so requests refused by auth or the rate limit get a span too.
 *
 * Recorded: method, route pattern, path without query string, status, request id, the caller's account
 * id and key mode (not secrets), the error kind of an error answer. Never headers, query or body.
 */
export function installTracing(app: GatewayApp, tracing: Tracing): void {
  if (!tracing.enabled) return;
  const spans = new WeakMap<FastifyRequest, RequestSpan>();

  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function tracedHandler(request, reply) {
      const span = spans.get(request);
      return span === undefined
        ? handler.call(this, request, reply)
        : span.run(() => handler.call(this, request, reply));
    };
  });

  app.addHook('onRequest', (request, reply, done) => {
    const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
    const route = request.is404 ? undefined : request.routeOptions.url;
    const span = tracing.startRequest(spanName(method, route), request.headers, {
      'http.request.method': method,
      'http.route': route,
      'url.path': pathOf(request.url),
      'gateway.request_id': request.id,
    });
    spans.set(request, span);
    reply.header('traceresponse', span.traceResponse);
    request.log = request.log.child({ trace_id: span.traceId });
    reply.log = request.log;
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const kind = errorKindOf(reply.statusCode, payload);
    if (kind !== undefined) {
      spans.get(request)?.setAttributes({
        'gateway.error': kind,
        // The semantic conventions' error class, for the answers that fail the span.
        'error.type': reply.statusCode >= 500 ? kind : undefined,
      });
    }
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span !== undefined) {
      span.setAttributes({
        'http.response.status_code': reply.statusCode,
        // `auth` is null on public routes and on requests refused before the key was checked.
        'gateway.account_id': request.auth?.accountId,
        'gateway.key_mode': request.auth?.mode,
      });
      // Server spans count only 5xx as failed (OpenTelemetry HTTP semantic conventions).
      if (reply.statusCode >= 500) span.fail(String(reply.statusCode));
      span.end();
    }
    done();
  });

  // A client that goes away before its answer: onResponse may never come.
  app.addHook('onRequestAbort', (request, done) => {
    const span = spans.get(request);
    span?.setAttributes({ 'gateway.client_aborted': true, 'gateway.account_id': request.auth?.accountId });
    span?.end();
    done();
  });
}

/** `{method} {route}`; without a route (404) the method alone, `HTTP` for an unknown method. */
function spanName(method: string, route: string | undefined): string {
  const name = method === '_OTHER' ? 'HTTP' : method;
  return route === undefined ? name : `${name} ${route}`;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
