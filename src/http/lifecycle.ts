import type { ServerResponse } from 'node:http';
import { ApiError } from '../core/errors.js';
import type { GatewayApp } from './types.js';

/** The drain's answer to a request: 503, retry in a second (at another instance, or this one restarted). */
export function shuttingDown(): ApiError {
  return new ApiError('service_unavailable', 'The gateway is shutting down; retry the request.', {
    retryAfter: 1,
  });
}

/**
 * X-Request-Id on every response; HTTP/1.1 requests without a Host header refused in the uniform shape
 * (Node's own refusal, turned off in app.ts, answers with an empty body); and graceful draining
 * (docs/resilience.md "Shutdown"): from `app.drain()` on (or `app.close()`), the gateway keeps accepting
 * connections, but every new request, readiness probes included, gets 503 `service_unavailable` with
 * Retry-After, and every response carries `Connection: close`, so keep-alive connections end instead
 * of holding the shutdown open. `drain()` resolves once the requests in flight when it began have been
 * answered; the server then closes its listener.
 */
export function installLifecycle(app: GatewayApp): void {
  let closing = false;
  // Requests still being answered, counted on the raw server so that every request is seen. Once
  // draining begins no request is counted, so the count only falls. A count, not a Set of the
  // responses: a process-wide Set that held each response until it closed made V8 move some 3 KB per
  // request into the old generation under load, with a mark-compact collection every second or so
  // (docs/performance.md "Responses not kept in a Set").
  let inFlight = 0;
  let idle: Promise<void> | undefined;
  let becameIdle: (() => void) | undefined;
  const answered = () => {
    inFlight--;
    if (inFlight === 0) becameIdle?.();
  };
  app.server.on('request', (_request, response: ServerResponse) => {
    if (closing) return;
    inFlight++;
    response.once('close', answered);
  });
  app.decorate('isDraining', () => closing);
  app.decorate('drain', async () => {
    closing = true;
    idle ??=
      inFlight === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            becameIdle = resolve;
          });
    await idle;
  });
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback hooks, not async ones: no promise and no microtask hop on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new ApiError('invalid_request', 'An HTTP/1.1 request must carry a Host header.', {
        param: 'Host',
      });
    }
    if (closing) throw shuttingDown();
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
