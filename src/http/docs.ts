import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyContextConfig, FastifyRequest, FastifySchema } from 'fastify';
import { LICENSE, VERSION } from '../core/version.js';
import { SWAGGER_UI_OPTIONS } from './docs-ui.js';
import { errorCodeList } from './error-catalogue-doc.js';
import { credentialHeadersRequired } from './msv3-credentials.js';
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
      // Replaced, as the document is served, by the origin the caller used (`serversFor`).
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
    await docs.register(fastifySwaggerUi, {
      ...SWAGGER_UI_OPTIONS,
      transformSpecification: (document, request) => ({ ...document, servers: serversFor(request) }),
    });
  });
  // Where a person lands. 302, not 308: browsers keep permanent redirects indefinitely, and `/` may one
  // day answer something else (a status page). GET and HEAD alike (Fastify adds HEAD to every GET).
  app.get('/', { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
    reply.redirect('/docs', 302),
  );
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async (request) => ({
    ...app.swagger(),
    servers: serversFor(request),
  }));
}

/**
 * Adds what every operation shares: the error body as default response, the "Errors:" sentence of its
 * declared errors, the description of its success answer; no key on public routes. And says what the
 * server does where its validation schemas leave it to the handler: a query or header value with a
 * `default` may be left out (it is filled in), and the MSV3 login headers are required (the handler
 * refuses a call without them, with its own error kind).
 */
function documented(schema: FastifySchema | undefined, config: FastifyContextConfig): FastifySchema {
  const { responseDescription, ...base } = schema ?? {};
  const { errors, idempotent = false } = config;
  const sentence =
    errors === undefined ? undefined : errorsSentence(errors, { idempotent, keyed: config.public !== true });
  const description = [base.description, sentence].filter(Boolean).join(' ');
  const isPublic = config.public === true;
  return {
    ...base,
    ...(description === '' ? {} : { description }),
    ...(base.querystring === undefined ? {} : { querystring: defaultsOptional(base.querystring) }),
    ...(base.headers === undefined
      ? {}
      : { headers: defaultsOptional(credentialHeadersRequired(base.headers)) }),
    response: {
      ...successDescribed(base.response as Record<string, object> | undefined, responseDescription),
      default: { description: 'Error; see the error catalogue.', $ref: 'ErrorBody#' },
    },
    ...(isPublic ? { security: [] } : {}),
  };
}

/** An object schema whose properties with a `default` are no longer listed as required. */
function defaultsOptional(schema: unknown): unknown {
  const { properties, required } = schema as { properties?: Record<string, object>; required?: string[] };
  if (properties === undefined || required === undefined) return schema;
  const stillRequired = required.filter(
    (name) => !(properties[name] !== undefined && 'default' in properties[name]),
  );
  if (stillRequired.length === required.length) return schema;
  const { required: _, ...rest } = schema as Record<string, unknown>;
  return stillRequired.length === 0 ? rest : { ...rest, required: stillRequired };
}

/** Each 2xx response is described by the route's `responseDescription` (over its schema's own). */
function successDescribed(
  responses: Record<string, object> | undefined,
  responseDescription: string | undefined,
): Record<string, object> {
  if (responses === undefined || responseDescription === undefined) return { ...responses };
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) =>
      /^2\d\d$/.test(status)
        ? [status, { ...response, 'x-response-description': responseDescription }]
        : [status, response],
    ),
  );
}

/** What a Host header may be for the document to name it as its server: a host name or address and a port. */
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The document's `servers`: the origin the caller reached this gateway by, so that a client generated
 * from the document has a base URL that works (a relative `/` gives Node clients none). A Host header
 * that is no plain host and port leaves the relative one.
 */
function serversFor(request: FastifyRequest): { url: string; description: string }[] {
  const host = request.host;
  if (!PLAIN_HOST.test(host)) return [{ url: '/', description: 'This gateway' }];
  return [
    { url: `${request.protocol}://${host}`, description: 'This gateway, as this document was fetched' },
  ];
}
