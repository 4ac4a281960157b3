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
      const checked = (error: Error | null, parsed: unknown) => {
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
      };
      const parsed = parseWithoutPoisonableKeys(body);
      return parsed === undefined ? parseJson(request, body, checked) : checked(null, parsed);
    },
  );
}

/**
 * The value of a JSON text that cannot hold a `__proto__` or `constructor` key: no backslash (an escape
 * could spell either word), neither word, no byte-order mark. Such a text needs none of the scans of the
 * whole text for those keys that Fastify's parser runs after parsing (two regular expressions, about
 * 18 K instructions for a 50-item availability body). Undefined for any other text and for invalid
 * JSON, which Fastify's parser then reads and judges.
 */
export function parseWithoutPoisonableKeys(text: string): unknown {
  if (
    text.charCodeAt(0) === 0xfeff ||
    text.includes('\\') ||
    text.includes('__proto__') ||
    text.includes('constructor')
  )
    return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
