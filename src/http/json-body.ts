import type { FastifyRequest } from 'fastify';
import type { GatewayApp } from './types.js';

/**
 * Fastify's JSON body parser (prototype poisoning refused), except that an empty body is no body on a
 * route that takes none: many HTTP clients send `Content-Type: application/json` on every request,
 * DELETE included. Routes with a body schema still answer an empty body with `malformed_json`.
 */
export function installJsonBodyParser(app: GatewayApp): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string, done) => {
      if (body === '' && request.routeOptions.schema?.body === undefined) return done(null, undefined);
      return parseJson(request, body, done);
    },
  );
}
