import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../core/errors.js';
import { type Credentials, createCredentials } from '../msv3/credentials.js';
import type { CustomerRequest } from '../services/deliveries/notices.js';
import { headerLineCount } from './raw-headers.js';

/**
 * The wholesaler credentials of one request. Required (400 `wholesaler_credentials_missing` when absent
 * or malformed) on every endpoint that calls a wholesaler: the gateway stores none, so it cannot call
 * without them. They live in this object for the one call and are never logged (see observability).
 */

/** MSV3 Kundenkennung (docs/msv3.md "Authentication"): an optional `branch\` prefix, then letters and digits. */
export const USERNAME_PATTERN = /^(?:[a-zA-Z0-9]+\\)?[a-zA-Z0-9]+$/;
// Printable characters only: a header cannot carry control characters safely.
export const PASSWORD_PATTERN = /^[\x20-\x7e\u00a0-\uffff]{1,256}$/;

const USERNAME_HEADER = Type.String({
  description:
    'MSV3 user name (Kundenkennung) at the wholesaler, e.g. `apotheke1` or `PLA\\apotheke1`. Without it: 400 `wholesaler_credentials_missing`.',
});
const PASSWORD_HEADER = Type.String({
  description:
    'MSV3 password; used for this one call and never stored or logged. Without it: 400 `wholesaler_credentials_missing`.',
});

/**
 * The route schema: optional for validation, so that a request without them reaches `msv3Credentials`
 * and gets its own kind and message (`wholesaler_credentials_missing`, `param` naming the header) rather
 * than the schema's `invalid_request`.
 */
export const Msv3CredentialHeaders = Type.Object({
  'x-msv3-username': Type.Optional(USERNAME_HEADER),
  'x-msv3-password': Type.Optional(PASSWORD_HEADER),
});

const CREDENTIAL_HEADERS = ['x-msv3-username', 'x-msv3-password', 'x-msv3-credentials'] as const;

/**
 * A route's header schema as the OpenAPI document shows it (http/docs.ts): the MSV3 login headers
 * required, as the server refuses every call without them, so a generated client cannot leave them out.
 */
export function credentialHeadersRequired(headers: unknown): unknown {
  const { properties, required = [] } = headers as { properties?: object; required?: string[] };
  if (properties === undefined) return headers;
  const present = CREDENTIAL_HEADERS.filter((name) => name in properties);
  if (present.length === 0) return headers;
  return { ...(headers as object), required: [...new Set([...required, ...present])] };
}

/** One pharmacy's call to one wholesaler: the caller, the wholesaler id as requested, the credentials. */
export function customerRequest(request: FastifyRequest, wholesaler: string): CustomerRequest {
  return { tenant: request.auth, wholesaler, credentials: msv3Credentials(request, wholesaler) };
}

export function msv3Credentials(request: FastifyRequest, wholesaler: string | null = null): Credentials {
  // A repeated header arrives joined with ", ": sent on, that would be a failed login at the wholesaler
  // (and enough of them lock the pharmacy's account).
  const repeated = repeatedCredentialHeader(request);
  if (repeated !== undefined) {
    throw missing(
      repeated,
      `Send the ${repeated} header once; this request carries it several times.`,
      wholesaler,
    );
  }
  const username = single(request.headers['x-msv3-username']);
  const password = utf8HeaderText(single(request.headers['x-msv3-password']));
  if (username === undefined || username === '') {
    throw missing(
      'X-MSV3-Username',
      'The X-MSV3-Username header is required for calls to a wholesaler.',
      wholesaler,
    );
  }
  if (password === undefined || password === '') {
    throw missing(
      'X-MSV3-Password',
      'The X-MSV3-Password header is required for calls to a wholesaler.',
      wholesaler,
    );
  }
  if (username.length > 80 || !USERNAME_PATTERN.test(username)) {
    throw missing(
      'X-MSV3-Username',
      'X-MSV3-Username must be an MSV3 customer id: letters and digits, optionally prefixed by `branch\\`, at most 80 characters.',
      wholesaler,
    );
  }
  if (!PASSWORD_PATTERN.test(password)) {
    throw missing('X-MSV3-Password', 'X-MSV3-Password must be 1 to 256 printable characters.', wholesaler);
  }
  return createCredentials(username, password);
}

function repeatedCredentialHeader(request: FastifyRequest): string | undefined {
  if (headerLineCount(request, 'x-msv3-username') > 1) return 'X-MSV3-Username';
  if (headerLineCount(request, 'x-msv3-password') > 1) return 'X-MSV3-Password';
  return undefined;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Node reads header bytes as Latin-1, so a password like `Apotheke-Süd` sent as UTF-8 (what curl and
 * every HTTP library send) arrives as `Apotheke-SÃ¼d`. Bytes that form valid UTF-8 are read as UTF-8
 * (RFC 7617's charset="UTF-8"); anything else stays Latin-1, as a client writing Latin-1 meant it.
 */
export function utf8HeaderText(value: string | undefined): string | undefined {
  if (value === undefined || !/[\x80-\xff]/.test(value)) return value;
  if (/[^\x00-\xff]/.test(value)) return value;
  try {
    return strictUtf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

function missing(param: string, message: string, wholesaler: string | null): ApiError {
  return new ApiError('wholesaler_credentials_missing', message, { param, wholesaler });
}
