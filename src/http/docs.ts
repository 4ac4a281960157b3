import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyContextConfig, FastifySchema } from 'fastify';
import { LICENSE, VERSION } from '../core/version.js';
import { errorCatalogueTable, errorCodeList } from './error-catalogue-doc.js';
import { createOpenApiErrors } from './openapi-errors.js';
import { errorsSentence } from './route-errors.js';
import { ErrorBodySchema } from './schemas/error.js';
import { openApiWebhooks } from './schemas/webhook-events.js';
import type { GatewayApp } from './types.js';

const DESCRIPTION = `JSON gateway in front of German pharmaceutical wholesalers' MSV3 (SOAP) interfaces.

**Authentication.** Send \`X-API-Key: pk_test_…\` (sandbox) or \`pk_live_…\` with every request except
health, the docs and metrics.

**Request ids.** Every response carries \`X-Request-Id\`. Send your own (\`[A-Za-z0-9._:-]\`, up to 128
characters) to have it kept; otherwise the gateway makes one (\`req_…\`). Error bodies repeat it.

**Rate limits.** Per API key, with separate budgets for test and live keys. Every keyed response carries
\`RateLimit-Limit\` (requests per window), \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds until the
window resets, not a timestamp). Over budget: \`429 rate_limited\` with \`Retry-After\` in seconds.

**Errors.** Every 4xx and 5xx body is \`{ error, message, wholesaler, error_code, request_id, param? }\`.
\`error_code\` values are stable. The same list is in \`x-error-codes\`.

${errorCatalogueTable()}
`;

/** The package's licence: its SPDX id, or a `LicenseRef-` (SPDX's form for others) for UNLICENSED. */
function openApiLicense(): { name: string; identifier: string } {
  return { name: LICENSE, identifier: LICENSE === 'UNLICENSED' ? 'LicenseRef-UNLICENSED' : LICENSE };
}

/** OpenAPI 3 from the route schemas at /v1/openapi.json, Swagger UI at /docs; both public. */
export async function registerDocs(app: GatewayApp): Promise<void> {
  app.addSchema(ErrorBodySchema);
  const openApiErrors = createOpenApiErrors();
  app.addHook('onRoute', openApiErrors.onRoute);
  await app.register(fastifySwagger, {
    openapi: {
      // 3.1: `webhooks` documents every event payload; TypeBox's `type: 'null'` is valid JSON Schema there.
      openapi: '3.1.0',
      info: {
        title: 'MSV3 Gateway API',
        version: VERSION,
        description: DESCRIPTION,
        license: openApiLicense(),
      },
      // Relative: the gateway that serves this document is the server.
      servers: [{ url: '/', description: 'This gateway' }],
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'pk_test_… or pk_live_…' },
        },
      },
      security: [{ ApiKey: [] }],
      webhooks: openApiWebhooks() as Record<string, fastifySwagger.OpenAPIV3_2.PathItemObject>,
      // Extensions are not part of the OpenAPI types; spreading keeps the object literal check happy.
      ...{ 'x-error-codes': errorCodeList() },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    // Each operation's error responses, from the routes' declared errors (src/http/route-errors.ts).
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const document = documentObject.openapiObject;
      openApiErrors.addResponses(document as Parameters<typeof openApiErrors.addResponses>[0]);
      return document;
    },
    transform: ({ schema, url, route }) => ({
      url,
      schema: documented(schema, route.config ?? {}),
    }),
  });
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true };
    });
    await docs.register(fastifySwaggerUi, { routePrefix: '/docs' });
  });
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}

/**
 * Adds what every operation shares: the error body as default response, the "Errors:" sentence of its
 * declared errors; no key on public routes.
 */
function documented(schema: FastifySchema | undefined, config: FastifyContextConfig): FastifySchema {
  const base = schema ?? {};
  const { errors, idempotent = false } = config;
  const sentence =
    errors === undefined ? undefined : errorsSentence(errors, { idempotent, keyed: config.public !== true });
  const description = [base.description, sentence].filter(Boolean).join(' ');
  const isPublic = config.public === true;
  return {
    ...base,
    ...(description === '' ? {} : { description }),
    response: {
      ...(base.response as object | undefined),
      default: { description: 'Error; see the error catalogue.', $ref: 'ErrorBody#' },
    },
    ...(isPublic ? { security: [] } : {}),
  };
}
