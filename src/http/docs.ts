import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyContextConfig, FastifySchema } from 'fastify';
import { LICENSE, VERSION } from '../core/version.js';
import { SWAGGER_UI_OPTIONS } from './docs-ui.js';
import { errorCodeList } from './error-catalogue-doc.js';
import { createOpenApiErrors } from './openapi-errors.js';
import { ERRORS_TAG, openApiTags } from './openapi-tags.js';
import { errorsSentence } from './route-errors.js';
import { ErrorBodySchema } from './schemas/error.js';
import { openApiWebhooks } from './schemas/webhook-events.js';
import type { GatewayApp } from './types.js';

// A few lines: the endpoints follow at once; the error catalogue is the last section (openapi-tags.ts),
// linked by the id Swagger UI gives its heading (its own `#/errors` deep links work on load only).
const DESCRIPTION = `JSON gateway in front of German pharmaceutical wholesalers' MSV3 (SOAP) interfaces.

- **Authentication:** send \`X-API-Key\` with every request except health, the docs and metrics
  (**Authorize** sets it for "Try it out").
- **Test mode:** a \`pk_test_…\` key reaches the built-in sandbox wholesaler (any MSV3 login; nothing is
  ordered for real) or, as \`<id>_test\`, a wholesaler's own test server; \`pk_live_…\` the live servers.
- **Errors:** one body, \`{ error, message, wholesaler, error_code, request_id, param? }\`; each operation
  lists its own, and [the error catalogue](#operations-tag-${ERRORS_TAG}) at the end lists all, with request ids and rate limits.
`;

/** The package's licence: its SPDX id, or a `LicenseRef-` (SPDX's form for others) for UNLICENSED. */
function openApiLicense(): { name: string; identifier: string } {
  return { name: LICENSE, identifier: LICENSE === 'UNLICENSED' ? 'LicenseRef-UNLICENSED' : LICENSE };
}

/** OpenAPI 3 from the route schemas at /v1/openapi.json, Swagger UI at /docs (and `/` leads there); public. */
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
      tags: openApiTags(),
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
    await docs.register(fastifySwaggerUi, SWAGGER_UI_OPTIONS);
  });
  // Where a person lands. 302, not 308: browsers keep permanent redirects indefinitely, and `/` may one
  // day answer something else (a status page). GET and HEAD alike (Fastify adds HEAD to every GET).
  app.get('/', { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
    reply.redirect('/docs', 302),
  );
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
