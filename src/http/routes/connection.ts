import { Type } from 'typebox';
import { type DeviationName, TOLERATED_DEVIATIONS } from '../../msv3/deviations.js';
import { testConnection } from '../../services/connection-test.js';
import { UPSTREAM_ERROR_KINDS } from '../../wholesalers/upstream-errors.js';
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
        description: `Needs \`X-MSV3-Username\` and \`X-MSV3-Password\`. For a custom wholesaler, the first success against its registered endpoint (live key, or \`<id>_test\` with a test key) that also reads its contract data sets \`verified: true\` and fills \`capabilities\` from it; when the contract data cannot be read or decoded, the answer is still 200 with a \`warnings\` entry naming the error kind, and the wholesaler stays unverified. \`tolerated_deviations\` lists the schema deviations this gateway process has accepted in the endpoint's answers (MSV3_TOLERATE_DEVIATIONS), to report to the wholesaler.`,
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
              warnings: Type.Array(
                Type.Object(
                  {
                    error: Type.Enum([...UPSTREAM_ERROR_KINDS], {
                      description: 'The error kind the step that could not be done answered with.',
                    }),
                    message: Type.String(),
                  },
                  { additionalProperties: false },
                ),
                {
                  description:
                    "Additive: what the test could not check, e.g. a custom wholesaler's contract data that could not be read or decoded (it then stays unverified). Empty when everything was checked.",
                },
              ),
              tolerated_deviations: Type.Array(
                Type.Object(
                  {
                    deviation: Type.Enum(Object.keys(TOLERATED_DEVIATIONS) as DeviationName[], {
                      description: 'Which deviation (docs: msv3.md "Tolerated deviations").',
                    }),
                    description: Type.String({ description: 'What is wrong, to tell the wholesaler.' }),
                    first_seen_in: Type.String({
                      description:
                        'The MSV3 operation whose answer had it first, e.g. `vertragsdatenAbfragen`.',
                    }),
                  },
                  { additionalProperties: false },
                ),
                {
                  description:
                    "Additive: schema deviations this gateway process has accepted in the endpoint's answers since it started (MSV3_TOLERATE_DEVIATIONS); empty for a wholesaler that follows the XSD.",
                },
              ),
            },
            {
              examples: [
                {
                  connected: true,
                  wholesaler: 'custom-hausapotheke-nord-3f9a1c',
                  latency_ms: 87,
                  route: 'live',
                  warnings: [],
                  tolerated_deviations: [
                    {
                      deviation: 'qualified_return',
                      description: TOLERATED_DEVIATIONS.qualified_return,
                      first_seen_in: 'vertragsdatenAbfragen',
                    },
                  ],
                },
              ],
            },
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
