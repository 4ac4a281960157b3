import { Type } from 'typebox';
import type { AppDeps } from '../../app.js';
import type { GatewayApp } from '../types.js';
import { VERSION } from '../version.js';

export function registerHealthRoutes(app: GatewayApp, _deps: AppDeps): void {
  app.get(
    '/v1/health',
    {
      config: { public: true },
      schema: {
        operationId: 'getHealth',
        tags: ['service'],
        summary: 'Liveness and version',
        response: { 200: Type.Object({ status: Type.Literal('ok'), version: Type.String() }) },
      },
    },
    async () => ({ status: 'ok' as const, version: VERSION }),
  );
}
