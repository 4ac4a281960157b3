import { Type } from 'typebox';
import type { RouteRegistration } from '../src/http/app-deps.js';

/**
 * Routes that exist only in tests, to drive the shared machinery (validation, errors, auth, logs,
 * shutdown) through real HTTP. Pass them as `extraRoutes` to `buildTestApp`.
 */
export const registerProbeRoutes: RouteRegistration = (app) => {
  app.post(
    '/test/orders',
    {
      schema: {
        body: Type.Object(
          {
            wholesaler: Type.String({ minLength: 1 }),
            items: Type.Array(
              Type.Object(
                {
                  pzn: Type.String({ pattern: '^[0-9]{1,8}$' }),
                  quantity: Type.Integer({ minimum: 1 }),
                  demand_type: Type.Optional(Type.Enum(['direct', 'one_of_many', 'unspecified'])),
                },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 50 },
            ),
          },
          { additionalProperties: false },
        ),
        querystring: Type.Object({ dry_run: Type.Boolean({ default: false }) }),
      },
    },
    async (request) => ({ accepted: request.body.items.length, dry_run: request.query.dry_run }),
  );

  app.get('/test/whoami', async (request) => request.auth);

  app.get('/test/items/:id', { schema: { params: Type.Object({ id: Type.String() }) } }, async (request) => ({
    id: request.params.id,
  }));

  app.get('/test/boom', async () => {
    throw new Error('database password is hunter2 (internal detail)');
  });

  app.get('/test/log-secrets', async (request) => {
    request.log.info({ headers: request.headers }, 'headers as received');
    request.log.info(
      { upstream: { call: { credentials: { username: 'kunde-4711', password: 'hunter2-nested' } } } },
      'nested credentials',
    );
    return { logged: true };
  });
};
