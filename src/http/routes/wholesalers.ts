import { Type } from 'typebox';
import type { AppDeps } from '../../app.js';
import { BUILTIN_WHOLESALERS } from '../../wholesalers/builtin.js';
import type { GatewayApp } from '../types.js';

export const WholesalerSchema = Type.Object({
  id: Type.String({ description: 'Used as `wholesaler` in requests.' }),
  name: Type.String(),
  endpoint: Type.Optional(Type.String({ format: 'uri', description: 'Custom wholesalers only.' })),
  verified: Type.Boolean(),
  capabilities: Type.Array(Type.String(), { description: '`availability`, `order`, `contracts`, …' }),
});

export function registerWholesalerRoutes(app: GatewayApp, _deps: AppDeps): void {
  app.get(
    '/v1/wholesalers',
    {
      schema: {
        operationId: 'listWholesalers',
        tags: ['wholesalers'],
        summary: 'Wholesalers this key can use',
        response: { 200: Type.Object({ wholesalers: Type.Array(WholesalerSchema) }) },
      },
    },
    async () => ({ wholesalers: [...BUILTIN_WHOLESALERS] }),
  );
}
