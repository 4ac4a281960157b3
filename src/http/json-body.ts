import type { FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';
import { describeJsonError } from './json-error-position.js';
import { nulInJson } from './nul-characters.js';
import type { GatewayApp } from './types.js';
import { describeSchemaErrors, nulError } from './validation-messages.js';

/**
 * Fastify's JSON body parser (prototype poisoning refused), except that an empty body is no body on a
 * route that takes none: many HTTP clients send `Content-Type: application/json` on every request,
 * DELETE included. Routes with a body schema still answer an empty body with `malformed_json`. Valid
 * JSON refused for a `__proto__` or `constructor.prototype` key is told so, not called invalid JSON;
 * invalid JSON is told where it goes wrong (line, column). A NUL character in any string is refused
 * (src/http/nul-characters.ts).
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
        // Where it went wrong, as line and column: the parser's own message names no position.
        if (error !== null) return done(new ApiError('malformed_json', describeJsonError(body)), undefined);
        const nul = nulInJson(body, parsed);
        if (nul !== undefined) {
          const { message, param } = describeSchemaErrors([nulError(nul)], 'body');
          return done(
            new ApiError('invalid_request', message, param === undefined ? {} : { param }),
            undefined,
          );
        }
        return done(null, parsed);
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
