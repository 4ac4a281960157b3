import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../core/errors.js';
import { classifyAddress } from '../../lib/address-kinds.js';
import type { AppDeps } from '../app-deps.js';
import type { GatewayApp } from '../types.js';

/**
 * Prometheus exposition. With METRICS_TOKEN set it needs that bearer token; without one it answers only
 * callers on this host (loopback), so a fresh install does not publish its traffic figures to the network.
 */
export function registerMetricsRoutes(app: GatewayApp, deps: AppDeps): void {
  const token = deps.config.metrics.token;
  const expected = token === undefined ? undefined : digest(token);
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    if (expected === undefined) {
      if (classifyAddress(request.socket.remoteAddress ?? '') !== 'loopback') {
        throw new ApiError(
          'metrics_token_invalid',
          'GET /metrics answers other hosts only when the operator sets METRICS_TOKEN; then send Authorization: Bearer <METRICS_TOKEN>.',
          { headers: { 'www-authenticate': 'Bearer realm="metrics"' } },
        );
      }
    } else {
      const presented = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        throw new ApiError('metrics_token_invalid', 'Send Authorization: Bearer <METRICS_TOKEN>.', {
          headers: { 'www-authenticate': 'Bearer realm="metrics"' },
        });
      }
    }
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.exposition === undefined
      ? deps.metrics.registry.metrics()
      : deps.metrics.exposition();
  });
}

/** Equal-length digests, so the comparison takes the same time whatever was sent. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
