import { compareAvailability } from '../../services/availability/compare.js';
import type { AppDeps } from '../app-deps.js';
import { Msv3CredentialDictionaryHeader, msv3CredentialsFor } from '../msv3-credential-dictionary.js';
import { upstreamFor } from '../request-notes.js';
import { routeErrors } from '../route-errors.js';
import { CompareAnswerSchema, CompareBody } from '../schemas/availability-compare.js';
import type { GatewayApp } from '../types.js';

/**
 * POST /v1/availability/compare: one availability question to several wholesalers, in parallel under one
 * deadline, with a recommendation per article (services/availability/compare.ts). Refused as a whole
 * only for what the caller fixes before anything is sent; what a wholesaler does is its own entry.
 */

const COMPARE_ERRORS = routeErrors(
  ['invalid_request', 'wholesaler_credentials_missing', 'wholesaler_not_found'],
  {
    invalid_request: 'the message and `param` name the field, e.g. `wholesalers[2]` or `items[3].pzn`',
    wholesaler_credentials_missing:
      'X-MSV3-Credentials is missing, malformed or has no member for a wholesaler of the request; `wholesaler` names it',
    wholesaler_not_found: 'a wholesaler id of the request is unknown; nothing was asked',
  },
);

export function registerAvailabilityCompareRoutes(app: GatewayApp, deps: AppDeps): void {
  app.post(
    '/v1/availability/compare',
    {
      config: { errors: COMPARE_ERRORS },
      schema: {
        operationId: 'compareAvailability',
        tags: ['availability'],
        summary: 'Availability of up to 50 articles at up to 10 wholesalers at once, with a recommendation',
        responseDescription:
          'Per wholesaler its availability answer or its error; per article where to order it and why.',
        description: `Asks every wholesaler of \`wholesalers\` in parallel, as POST /v1/availability asks one, and answers after all have answered or at \`deadline_ms\`, whichever comes first: a wholesaler still open then is stopped and reported as \`timeout\`. A wholesaler's failure (fault, open circuit, unreachable, rejected login) is its own entry; the others answer as usual. The logins travel in X-MSV3-Credentials, one member per wholesaler. Per article, the recommendation is the first wholesaler in preference order that delivers the full quantity, else the one delivering the most, the earliest among equals.`,
        headers: Msv3CredentialDictionaryHeader,
        body: CompareBody,
        response: {
          200: CompareAnswerSchema,
        },
      },
    },
    async (request) =>
      compareAvailability(
        upstreamFor(request, deps.upstream),
        request.auth,
        msv3CredentialsFor(request, request.body.wholesalers),
        request.body,
      ),
  );
}
