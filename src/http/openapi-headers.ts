import type { RouteShape } from './route-errors.js';

/**
 * The response headers the OpenAPI document declares, so a generated client can read them: the request
 * id on every answer (lifecycle.ts), the rate-limit budget on every keyed answer (rate-limit.ts) and the
 * replay marks on idempotent routes (idempotency.ts). `required` only where every answer of that status
 * carries the header: the budget is not reported when the key was refused before it was charged.
 */

interface HeaderObject {
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

const REQUEST_ID: HeaderObject = {
  description:
    "This request's id: `req_…`, or the X-Request-Id the request carried when it is 1 to 128 of `A-Z a-z 0-9 . _ : -`. Error bodies repeat it as `request_id`; quote it to support.",
  schema: { type: 'string' },
};

const RATE_LIMIT: Record<string, HeaderObject> = {
  'RateLimit-Limit': {
    description: 'Requests allowed per window for this API key.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the window resets (a delay, not a timestamp).',
    schema: { type: 'integer', minimum: 0 },
  },
};

const REPLAY: Record<string, HeaderObject> = {
  'Idempotent-Replayed': {
    description:
      'Present, `true`, when this is the stored answer to an earlier request with the same Idempotency-Key: nothing was carried out again.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Original-Request': {
    description: 'With `Idempotent-Replayed`: the X-Request-Id of the request that was carried out.',
    schema: { type: 'string' },
  },
};

/** The headers of one response (`status`: `200`, `404`, `default`, …) of a route of this shape. */
export function responseHeaders(shape: RouteShape, status: string): Record<string, HeaderObject> {
  const success = /^2\d\d$/.test(status);
  const headers: Record<string, HeaderObject> = { 'X-Request-Id': { ...REQUEST_ID, required: true } };
  if (shape.keyed) {
    for (const [name, header] of Object.entries(RATE_LIMIT)) {
      headers[name] = success ? { ...header, required: true } : header;
    }
  }
  if (shape.idempotent) Object.assign(headers, REPLAY);
  return headers;
}
