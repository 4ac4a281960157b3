import { Type } from 'typebox';
import { testConnection } from '../../services/connection-test.js';
import type { AppDeps } from '../app-deps.js';
import { Msv3CredentialHeaders, msv3Credentials } from '../msv3-credentials.js';
import { withCallNotes } from '../request-notes.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import { WholesalerIdSchema } from '../schemas/common.js';
import type { GatewayApp } from '../types.js';

const CONNECTION_ERRORS = routeErrors([WHOLESALER_CALL_ERRORS]);

export function registerConnectionRoutes(app: GatewayApp, deps: AppDeps): void {
  app.post(
    '/v1/connection/test',
    {
      config: { errors: CONNECTION_ERRORS },
      schema: {
        operationId: 'testConnection',
        tags: ['wholesalers'],
        summary: 'Check the MSV3 credentials against a wholesaler (verbindungTesten)',
        responseDescription: 'The wholesaler accepted the MSV3 user name and password.',
        description: `Needs \`X-MSV3-Username\` and \`X-MSV3-Password\`. For a custom wholesaler, the first success against its registered endpoint (live key, or \`<id>_test\` with a test key) sets \`verified: true\` and fills \`capabilities\` from its contract data.`,
        headers: Msv3CredentialHeaders,
        body: Type.Object(
          { wholesaler: WholesalerIdSchema },
          { additionalProperties: false, examples: [{ wholesaler: 'phoenix' }] },
        ),
        response: {
          200: Type.Object(
            {
              connected: Type.Boolean({ description: 'Always true in a 200; failures are error responses.' }),
              wholesaler: Type.String(),
              latency_ms: Type.Integer({ description: 'Round trip of the SOAP call in milliseconds.' }),
              route: Type.Enum(['sandbox', 'test_server', 'live'], {
                description: 'Additive: where the call went.',
              }),
            },
            { examples: [{ connected: true, wholesaler: 'phoenix', latency_ms: 42, route: 'sandbox' }] },
          ),
        },
      },
    },
    async (request) => {
      const credentials = msv3Credentials(request, request.body.wholesaler);
      return testConnection(
        withCallNotes(request, deps.services.connection),
        request.auth,
        credentials,
        request.body.wholesaler,
      );
    },
  );
}
