import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import { installAnswerBytes } from './http/answer-bytes.js';
import type { AppDeps, RouteRegistration } from './http/app-deps.js';
import { installAuth } from './http/auth.js';
import { registerDocs } from './http/docs.js';
import {
  answerClientError,
  answerFrameworkError,
  installErrorHandling,
  MAX_PARAM_LENGTH,
  refuseConnect,
} from './http/error-handler.js';
import { installIdempotency } from './http/idempotency.js';
import { installJsonBodyParser } from './http/json-body.js';
import { installLifecycle } from './http/lifecycle.js';
import { trackRouteMethods } from './http/method-not-allowed.js';
import { installObservation } from './http/observe.js';
import { installRateLimit } from './http/rate-limit.js';
import { requestIdFor } from './http/request-id.js';
import { registerAvailabilityRoutes } from './http/routes/availability.js';
import { registerAvailabilityCompareRoutes } from './http/routes/availability-compare.js';
import { registerConnectionRoutes } from './http/routes/connection.js';
import { registerContractRoutes } from './http/routes/contracts.js';
import { registerDeliveryRoutes } from './http/routes/deliveries.js';
import { registerDocumentRoutes } from './http/routes/documents.js';
import { registerEventRoutes } from './http/routes/events.js';
import { registerHealthRoutes } from './http/routes/health.js';
import { registerMetricsRoutes } from './http/routes/metrics.js';
import { registerOrderSplitRoutes } from './http/routes/order-splits.js';
import { registerOrderRoutes } from './http/routes/orders.js';
import { registerReturnRoutes } from './http/routes/returns.js';
import { registerSandboxControlRoutes } from './http/routes/sandbox-controls.js';
import { registerStatusPageRoutes } from './http/routes/status-page.js';
import { registerWebhookRoutes } from './http/routes/webhooks.js';
import { registerWholesalerRoutes } from './http/routes/wholesalers.js';
import { buildSerializer } from './http/serializer.js';
import { installTracing } from './http/tracing.js';
import type { GatewayApp } from './http/types.js';
import { validatorCompiler } from './http/validation.js';
import { NO_TRACING } from './observability/tracing.js';

/** Every route module, in order. Add yours here. */
export const ROUTES: readonly RouteRegistration[] = [
  registerHealthRoutes,
  registerWholesalerRoutes,
  registerConnectionRoutes,
  registerAvailabilityRoutes,
  registerAvailabilityCompareRoutes,
  registerContractRoutes,
  registerOrderRoutes,
  registerOrderSplitRoutes,
  registerDeliveryRoutes,
  registerReturnRoutes,
  registerDocumentRoutes,
  registerWebhookRoutes,
  registerEventRoutes,
  registerSandboxControlRoutes,
  registerMetricsRoutes,
  registerStatusPageRoutes,
];

/**
 * The gateway's HTTP app, booted and ready for `listen()` or `inject()`. `routes` defaults to
 * `ROUTES`; tests pass extra registrations to exercise the shared machinery.
 */
export async function buildApp(
  deps: AppDeps,
  routes: readonly RouteRegistration[] = ROUTES,
): Promise<GatewayApp> {
  const app: GatewayApp = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.config.server.bodyLimitBytes,
    genReqId: requestIdFor,
    // One "request completed" line per request comes from installObservation instead.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    return503OnClosing: false,
    // Node's checks every 5 s: a client that stalls while sending its request gets 408 (answerClientError).
    requestTimeout: deps.config.server.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, deps.config.server.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(5_000, deps.config.server.requestTimeoutMs),
      // A missing Host header is refused in lifecycle.ts, in the uniform error shape.
      requireHostHeader: false,
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    // fast-json-stringify with a faster path that writes the same bytes (http/serializer.ts);
    // FAST_PATH_SERIALIZER=false leaves fast-json-stringify alone, for benchmarks.
    ...(deps.config.fastPaths.serializer
      ? { schemaController: { compilersFactory: { buildSerializer } } }
      : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.on('connect', refuseConnect(app.log));
  app.setValidatorCompiler(validatorCompiler);
  app.removeContentTypeParser('text/plain'); // JSON only: anything else is 415
  installJsonBodyParser(app);

  installErrorHandling(app, { bodyLimitBytes: deps.config.server.bodyLimitBytes });
  const addMethodNotAllowedRoutes = trackRouteMethods(app);
  // onRequest hooks run in this order: trace span, request id and shutdown check, API key, rate limit.
  installTracing(app, deps.tracing ?? NO_TRACING);
  installLifecycle(app);
  installAuth(app, {
    db: deps.database.db,
    clock: deps.clock,
    cacheTtlMs: deps.config.apiKeys.cacheTtlMs,
    rateLimiter: deps.rateLimiter,
  });
  installRateLimit(app, deps);
  // Idempotency-Key on routes with `config: { idempotent: true }` (after auth and validation).
  installIdempotency(app, {
    db: deps.database.db,
    clock: deps.clock,
    lockTimeoutMs: deps.config.idempotency.lockTimeoutMs,
  });
  installObservation(app, deps);
  // The last app-wide onSend hook: the ones above still see the answer as a string.
  installAnswerBytes(app);
  await registerDocs(app);

  for (const register of routes) register(app, deps);

  addMethodNotAllowedRoutes();
  await app.ready();
  return app;
}
