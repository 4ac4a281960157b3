import { ApiError } from '../core/errors.js';
import { sendApiError } from './error-handler.js';
import type { GatewayApp } from './types.js';

const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const;

/**
 * Fastify answers an unknown method on a known path with 404. Call this before registering routes;
 * call the function it returns after the last route, to answer the other methods of every path with
 * 405 and an `Allow` header (before any body is read or any key is checked).
 */
export function trackRouteMethods(app: GatewayApp): () => void {
  const urls = new Set<string>();
  app.addHook('onRoute', (route) => {
    urls.add(route.url);
  });

  return () => {
    for (const url of [...urls]) {
      const allowed = METHODS.filter((method) => app.hasRoute({ method, url }));
      const missing = METHODS.filter((method) => !allowed.includes(method));
      if (allowed.length === 0 || missing.length === 0) continue;
      const allow = allowed.join(', ');
      app.route({
        method: missing,
        url,
        config: { public: true },
        schema: { hide: true },
        onRequest: async (request, reply) =>
          sendApiError(
            request,
            reply,
            new ApiError('method_not_allowed', `${request.method} is not allowed here; use ${allow}.`, {
              headers: { allow },
            }),
          ),
        handler: async () => undefined,
      });
    }
  };
}
