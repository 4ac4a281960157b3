import { Type } from 'typebox';
import { ApiError } from '../../core/errors.js';
import { VERSION } from '../../core/version.js';
import type { AppDeps } from '../app-deps.js';
import { shuttingDown } from '../lifecycle.js';
import { checkReadiness, READINESS_RETRY_AFTER_S } from '../readiness.js';
import { routeErrors } from '../route-errors.js';
import type { GatewayApp } from '../types.js';

const Ready = Type.Object(
  {
    status: Type.Literal('ready'),
    version: Type.String(),
    checks: Type.Object({
      database: Type.Literal('ok'),
      migrations: Type.Literal('ok'),
      webhook_worker: Type.Union([Type.Literal('running'), Type.Literal('disabled')]),
    }),
  },
  {
    examples: [
      {
        status: 'ready',
        version: '0.1.0',
        checks: { database: 'ok', migrations: 'ok', webhook_worker: 'running' },
      },
    ],
  },
);

/**
 * Liveness (`/v1/health`: the process answers HTTP; restart it if not) apart from readiness
 * (`/v1/health/ready`: send it traffic; database reachable, migrations applied, the webhook worker
 * running where it is enabled, not shutting down). See docs/operating.md, "Health probes".
 */
export function registerHealthRoutes(app: GatewayApp, deps: AppDeps): void {
  app.get(
    '/v1/health',
    {
      config: { public: true },
      schema: {
        operationId: 'getHealth',
        tags: ['service'],
        summary: 'Liveness and version',
        responseDescription: 'The process serves HTTP, and its version.',
        description:
          'Answers as long as the process serves HTTP; it checks no dependency (see /v1/health/ready).',
        response: {
          200: Type.Object(
            { status: Type.Literal('ok'), version: Type.String() },
            { examples: [{ status: 'ok', version: '0.1.0' }] },
          ),
        },
      },
    },
    async () => ({ status: 'ok' as const, version: VERSION }),
  );

  app.get(
    '/v1/health/ready',
    {
      config: {
        public: true,
        errors: routeErrors(['service_unavailable'], {
          service_unavailable: 'not ready: the message names what is missing',
        }),
      },
      schema: {
        operationId: 'getReadiness',
        tags: ['service'],
        summary: 'Readiness for traffic',
        responseDescription:
          'Ready: the database answers, every migration is applied and the webhook worker runs.',
        description:
          'Ready when the database answers within 2 s, every migration is applied and the webhook worker ' +
          'runs (where WEBHOOK_WORKER_ENABLED). Otherwise, and while the process shuts down, 503 ' +
          'service_unavailable naming what is missing, with Retry-After.',
        response: { 200: Ready },
      },
    },
    async () => {
      const { problems, webhookWorker } = await checkReadiness(deps);
      // A probe the drain began under (the worker stops with it) says so, as a probe after it would.
      if (app.isDraining()) throw shuttingDown();
      if (problems.length > 0) {
        throw new ApiError('service_unavailable', `Not ready: ${problems.join('; ')}.`, {
          retryAfter: READINESS_RETRY_AFTER_S,
        });
      }
      return {
        status: 'ready' as const,
        version: VERSION,
        checks: {
          database: 'ok' as const,
          migrations: 'ok' as const,
          webhook_worker: webhookWorker,
        },
      };
    },
  );
}
