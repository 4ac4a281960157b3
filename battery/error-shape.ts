import { ERROR_CATALOGUE, type ErrorKind } from '../src/core/errors.js';

/**
 * What the battery holds every error answer to (docs/error-catalogue.md): the body is exactly
 * `{error, message, wholesaler, error_code, request_id[, param, upstream, order_id]}`, `error` is a kind of the
 * catalogue with its code and status, a 5xx is one the catalogue documents (never `internal_error`),
 * 429 and 503 carry Retry-After, and nothing in it leaks a secret or the gateway's internals.
 * Pure functions, so that `battery/error-shape.test.ts` runs them under `npm test`.
 */

const REQUIRED = ['error', 'message', 'wholesaler', 'error_code', 'request_id'] as const;
const OPTIONAL = new Set(['param', 'upstream', 'order_id']);
const UPSTREAM_KEYS = new Set(['kind', 'error_code', 'user_text', 'technical_text', 'http_status']);

/** The kinds a gateway answers only when a wholesaler failed it: allowed on routes that call one. */
const WHOLESALER_5XX = new Set<ErrorKind>([
  'wholesaler_throttled',
  'wholesaler_circuit_open',
  'gateway_busy',
  'wholesaler_unreachable',
  'wholesaler_fault',
  'wholesaler_http_error',
  'wholesaler_unavailable',
  'wholesaler_bad_response',
  'wholesaler_timeout',
  'order_outcome_unknown',
  'return_outcome_unknown',
]);

function isKind(value: unknown): value is ErrorKind {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOGUE, value);
}

/** Why `text` (a 4xx/5xx body answered with `status`) is not the error shape; undefined when it is. */
export function errorShapeProblem(status: number, text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${JSON.stringify(text.slice(0, 80))}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'not a JSON object';
  const record = body as Record<string, unknown>;
  const missing = REQUIRED.filter((key) => !Object.hasOwn(record, key));
  if (missing.length > 0) return `missing ${missing.join(', ')}`;
  const extra = Object.keys(record).filter(
    (key) => !(REQUIRED as readonly string[]).includes(key) && !OPTIONAL.has(key),
  );
  if (extra.length > 0) return `unexpected ${extra.join(', ')}`;
  if (!isKind(record.error)) return `error ${JSON.stringify(record.error)} is not in the catalogue`;
  const entry = ERROR_CATALOGUE[record.error];
  if (record.error_code !== entry.code) return `error_code ${String(record.error_code)} is not ${entry.code}`;
  if (status !== entry.status) return `status ${status} for ${record.error} (catalogue: ${entry.status})`;
  if (typeof record.message !== 'string' || record.message === '') return 'message is not a non-empty string';
  if (record.wholesaler !== null && typeof record.wholesaler !== 'string')
    return 'wholesaler is not a string or null';
  if (typeof record.request_id !== 'string' || record.request_id === '') return 'request_id is not a string';
  if (record.param !== undefined && typeof record.param !== 'string') return 'param is not a string';
  if (record.upstream !== undefined) {
    const upstream = record.upstream;
    if (typeof upstream !== 'object' || upstream === null || Array.isArray(upstream))
      return 'upstream is not an object';
    const odd = Object.keys(upstream).filter((key) => !UPSTREAM_KEYS.has(key));
    if (odd.length > 0) return `unexpected upstream.${odd.join(', upstream.')}`;
  }
  return undefined;
}

/** The `error` of a body, when it has one. */
export function errorKindOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body?.error === 'string' ? body.error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a 5xx answer is undocumented; undefined for a 5xx the catalogue declares for this kind of route
 * (and for every status below 500). `callsWholesaler`: the route takes MSV3 credentials.
 */
export function undocumented5xxProblem(
  status: number,
  text: string,
  callsWholesaler: boolean,
): string | undefined {
  if (status < 500) return undefined;
  const shape = errorShapeProblem(status, text);
  if (shape !== undefined) return `${status} outside the error shape (${shape})`;
  const kind = errorKindOf(text) as ErrorKind;
  if (kind === 'internal_error') return '500 internal_error';
  if (WHOLESALER_5XX.has(kind) && !callsWholesaler) return `${kind} on a route that calls no wholesaler`;
  return undefined;
}

/** 429 and 503 answers carry Retry-After in whole seconds (docs/error-catalogue.md). */
export function retryAfterProblem(status: number, retryAfter: string | undefined): string | undefined {
  if (status !== 429 && status !== 503) return undefined;
  if (retryAfter === undefined) return `${status} without Retry-After`;
  if (!/^\d+$/.test(retryAfter)) return `${status} with Retry-After ${JSON.stringify(retryAfter)}`;
  return undefined;
}

/** Marks of the gateway's internals in an answer: stack frames, source paths, SQL, driver errors. */
const INTERNALS = [
  /\bat [\w.<>$]+ \(?(?:file:\/\/)?\/[^\s)]+:\d+:\d+\)?/, // a stack frame
  /node_modules\//,
  /\/src\/[\w/-]+\.ts\b/,
  /\b(?:select|insert into|update|delete from) [\w"]+.* (?:from|values|set|where) /i,
  /\bECONNREFUSED 127\.0\.0\.1:\d+/, // a database or Redis address
  /\b(?:duplicate key value|violates (?:unique|foreign key|check) constraint|relation "\w+")/,
];

/** Why `text` leaks: one of `secrets` in it, or (unless `internals` is false: logs) a mark of the internals. */
export function leakProblem(text: string, secrets: readonly string[], internals = true): string | undefined {
  for (const secret of secrets)
    if (secret !== '' && text.includes(secret)) return 'contains a secret sent in the request';
  if (!internals) return undefined;
  for (const pattern of INTERNALS) {
    const match = pattern.exec(text);
    if (match !== null) return `shows internals: ${JSON.stringify(match[0].slice(0, 60))}`;
  }
  return undefined;
}
