import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';
import { credentialUserNames } from './msv3-credential-dictionary.js';
import { headerLineCount } from './raw-headers.js';

/**
 * The pure parts of idempotency: reading the header, fingerprinting a request, and deciding which
 * outcomes are kept for replay. The hooks live in `idempotency.ts`.
 */

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** 1–255 printable ASCII characters (Stripe's limit); anything else could not be echoed back safely. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * The Idempotency-Key of the request, verbatim (an IETF structured-field string such as `"abc"` is taken
 * with its quotes, consistently), or undefined when absent.
 * @throws ApiError 400 `invalid_idempotency_key` when malformed or sent more than once.
 */
export function readIdempotencyKey(request: FastifyRequest): string | undefined {
  const count = headerLineCount(request, 'idempotency-key');
  if (count === 0) return undefined;
  if (count > 1) {
    throw invalidKey('Send the Idempotency-Key header once; this request carries it several times.');
  }
  const value = request.headers['idempotency-key'];
  const key = Array.isArray(value) ? value[0] : value;
  if (key === undefined || !KEY_PATTERN.test(key)) {
    throw invalidKey(
      'The Idempotency-Key header must be 1 to 255 printable ASCII characters (a UUID works well).',
    );
  }
  return key;
}

function invalidKey(message: string): ApiError {
  return new ApiError('invalid_idempotency_key', message, { param: 'Idempotency-Key' });
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * What makes two requests "the same request": method, route, path parameters, query and body (canonical
 * JSON after validation, so key order and filled-in defaults do not matter) and the MSV3 user name (or
 * the user names of X-MSV3-Credentials), so the same key used for another pharmacy is a different
 * request. The password never takes part.
 */
export function requestFingerprint(request: FastifyRequest): string {
  const username = request.headers['x-msv3-username'];
  const logins = credentialUserNames(request.headers['x-msv3-credentials']);
  return sha256Hex(
    canonicalJson([
      'v1',
      request.method,
      request.routeOptions.url ?? request.url,
      request.params ?? null,
      request.query ?? null,
      request.body ?? null,
      (Array.isArray(username) ? username[0] : username) ?? null,
      // Only when present, so the fingerprints of requests without it stay as they were.
      ...(logins === null ? [] : [logins]),
    ]),
  );
}

/** JSON with object keys sorted at every level; `undefined` members are dropped as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** Response headers worth replaying; rate-limit and request-id headers describe the new request instead. */
export const REPLAYED_HEADERS = ['content-type', 'location', 'content-disposition'] as const;
