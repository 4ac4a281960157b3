import { ApiError } from '../core/errors.js';
import type { GatewayApp } from './types.js';

/**
 * X-Request-Id on every response; HTTP/1.1 requests without a Host header refused in the uniform shape
 * (Node's own refusal, turned off in app.ts, answers with an empty body); and graceful draining: once
 * the app is closing, requests still arriving on open connections get 503, and responses to requests
 * already in flight carry `Connection: close`, so keep-alive connections end instead of holding the
 * shutdown open.
 */
export function installLifecycle(app: GatewayApp): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new ApiError('invalid_request', 'An HTTP/1.1 request must carry a Host header.', {
        param: 'Host',
      });
    }
    if (closing) {
      throw new ApiError('service_unavailable', 'The gateway is shutting down; retry the request.', {
        retryAfter: 1,
      });
    }
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}
