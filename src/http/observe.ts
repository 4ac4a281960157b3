import type { Metrics } from '../observability/metrics.js';
import type { GatewayApp } from './types.js';

/** Methods kept as they are in labels and span attributes; any other becomes `OTHER` (spans: `_OTHER`). */
export const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
]);

/** One log line and one metric sample per response, labelled by route pattern (never the raw URL). */
export function installObservation(app: GatewayApp, deps: { metrics: Metrics }): void {
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: KNOWN_METHODS.has(request.method) ? request.method : 'OTHER',
      route: request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched'),
      status: String(reply.statusCode),
    };
    deps.metrics.httpRequests.inc(labels);
    deps.metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    request.log.info(
      { req: request, res: reply, duration_ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request completed',
    );
  });
}
