import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import type { GatewayApp } from './types.js';

/**
 * Fastify's JSON body parser (prototype poisoning refused), except that an empty body is no body on a
 * route that takes none: many HTTP clients send `Content-Type: application/json` on every request,
 * DELETE included. Routes with a body schema still answer an empty body with `malformed_json`. Valid
 * JSON refused for a `__proto__` or `constructor.prototype` key is told so, not called invalid JSON.
 */
export function installJsonBodyParser(app: GatewayApp): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string, done) => {
      if (body === '' && request.routeOptions.schema?.body === undefined) return done(null, undefined);
      return parseJson(request, body, (error, parsed) => {
        if (error !== null && isValidJson(body)) {
          return done(
            new ApiError(
              'invalid_request',
              'The body must not contain "__proto__" or "constructor": {"prototype": …} keys.',
            ),
            undefined,
          );
        }
        return done(error, parsed);
      });
    },
  );
}

function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
