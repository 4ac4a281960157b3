import type { RouteOptions } from 'fastify';
import { ERROR_CATALOGUE, type ErrorKind } from '../core/errors.js';
import { responseHeaders } from './openapi-headers.js';
import {
  ANY_ROUTE_ERRORS,
  impliedErrors,
  RETRY_AFTER_KINDS,
  type RouteErrors,
  type RouteShape,
  routeShape,
} from './route-errors.js';

/** What the OpenAPI document needs of a route: its declared errors and its shape. */
interface DocumentedRoute {
  errors: RouteErrors | undefined;
  shape: RouteShape;
}

/**
 * Collects the routes' declared errors as they are registered (an `onRoute` hook) and writes them into
 * the finished OpenAPI document: one response per error status, naming its kinds, with an example of
 * each and a Retry-After header where one of them sends it; then the headers every response of the
 * route carries (openapi-headers.ts).
 */
export function createOpenApiErrors(): {
  onRoute(route: RouteOptions): void;
  addResponses(document: { paths?: Record<string, Record<string, unknown>> }): void;
} {
  const routes = new Map<string, DocumentedRoute>();
  return {
    onRoute(route) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        routes.set(`${method.toLowerCase()} ${openApiPath(route.url)}`, {
          errors: route.config?.errors,
          shape: routeShape(route.schema, route.config, method),
        });
      }
    },
    addResponses(document) {
      for (const [path, operations] of Object.entries(document.paths ?? {})) {
        for (const [method, operation] of Object.entries(operations)) {
          const route = routes.get(`${method} ${path}`);
          const responses = (operation as { responses?: Record<string, unknown> }).responses;
          if (route === undefined || responses === undefined) continue;
          const kinds = [...(route.errors?.kinds ?? []), ...impliedErrors(route.shape), ...ANY_ROUTE_ERRORS];
          for (const [status, response] of Object.entries(errorResponses(kinds))) {
            responses[status] ??= response;
          }
          for (const [status, response] of Object.entries(responses)) {
            const declared = response as { headers?: Record<string, unknown> };
            declared.headers = { ...responseHeaders(route.shape, status), ...declared.headers };
          }
        }
      }
    },
  };
}

/** `/v1/webhooks/:id` as OpenAPI writes it, `/v1/webhooks/{id}`. */
function openApiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}

const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 1 },
};

/** One OpenAPI response per status of `kinds`. */
function errorResponses(kinds: readonly ErrorKind[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorKind[]>();
  for (const kind of new Set(kinds)) {
    const { status } = ERROR_CATALOGUE[kind];
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, ofStatus] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retry = ofStatus.some((kind) => RETRY_AFTER_KINDS.has(kind));
    responses[String(status)] = {
      description: ofStatus.map((kind) => `\`${kind}\`: ${ERROR_CATALOGUE[kind].description}`).join('\n\n'),
      ...(retry ? { headers: { 'Retry-After': RETRY_AFTER_HEADER } } : {}),
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/ErrorBody' },
          examples: Object.fromEntries(ofStatus.map((kind) => [kind, { value: exampleBody(kind) }])),
        },
      },
    };
  }
  return responses;
}

function exampleBody(kind: ErrorKind): Record<string, unknown> {
  const { code, description } = ERROR_CATALOGUE[kind];
  return {
    error: kind,
    message: description,
    wholesaler: kind.startsWith('wholesaler_') ? 'phoenix' : null,
    error_code: code,
    request_id: 'req_4fJ8kQ2mN7pR1sT5vX9zA3',
  };
}
