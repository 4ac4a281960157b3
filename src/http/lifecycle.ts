import { ApiError } from './errors.js';
import type { GatewayApp } from './types.js';

/**
 * X-Request-Id on every response, and graceful draining: once the app is closing, requests still
 * arriving on open connections get 503, and responses to requests already in flight carry
 * `Connection: close`, so keep-alive connections end instead of holding the shutdown open.
 */
export function installLifecycle(app: GatewayApp): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
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
