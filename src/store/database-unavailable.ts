import { ApiError } from '../core/errors.js';

/**
 * Whether an error means "the database cannot serve right now" (lost or refused connection, server
 * shutting down or starting up, pool exhausted, SQLite busy or failing I/O), as opposed to a bug or a
 * constraint violation. The HTTP error handler answers these with 503 and Retry-After
 * (docs/resilience.md, "Losing the database"). Wrapped errors are followed through `cause` and
 * `AggregateError.errors`.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return unavailable(error, 0);
}

const MAX_DEPTH = 5;

function unavailable(error: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH || typeof error !== 'object' || error === null) return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string' && unavailableCode(code)) return true;
  if (typeof message === 'string' && code === undefined && PG_CONNECTION_MESSAGES.has(message)) return true;
  if (Array.isArray(errors) && errors.some((inner) => unavailable(inner, depth + 1))) return true;
  return unavailable(cause, depth + 1);
}

function unavailableCode(code: string): boolean {
  if (NODE_NETWORK_CODES.has(code)) return true;
  if (code.startsWith('SQLITE_')) return SQLITE_UNAVAILABLE.test(code);
  // SQLSTATE: five characters, the first two the class.
  return /^[0-9A-Z]{5}$/.test(code) && PG_UNAVAILABLE_CLASSES.has(code.slice(0, 2));
}

/**
 * PostgreSQL classes: 08 connection exception, 53 insufficient resources (too many connections, disk
 * full, out of memory), 57 operator intervention (57P01 admin shutdown, i.e. pg_terminate_backend or a
 * fast/immediate stop; 57P02 crash shutdown; 57P03 starting up; 57014 query cancelled), 58 system error
 * (I/O).
 */
const PG_UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);

/** The refused, reset or unreachable connection to the database server (node:net, DNS). */
const NODE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLite primary result codes (and their extended codes) that mean busy, locked, out of resources or I/O. */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL|NOMEM|READONLY)(_|$)/;

/** node-postgres (pg, pg-pool) raises these without a code when a connection ends or cannot be made. */
const PG_CONNECTION_MESSAGES = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Query read timeout',
]);

/**
 * Retry-After (seconds) of a 503 caused by the database: long enough for a pool to reconnect after a
 * dropped connection, short enough that a client retrying once does not wait noticeably longer than a
 * database restart takes (docs/resilience.md, "Losing the database").
 */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

const DEFAULT_MESSAGE = 'The database is unavailable right now; retry shortly.';

/** 503 `service_unavailable` with Retry-After; `cause` is logged, never shown. */
export function databaseUnavailable(cause: unknown, message = DEFAULT_MESSAGE): ApiError {
  return new ApiError('service_unavailable', message, { retryAfter: DATABASE_RETRY_AFTER_SECONDS, cause });
}

/** The 503 for an error the database caused (see `isDatabaseUnavailable`), else undefined. */
export function databaseErrorToApiError(error: unknown): ApiError | undefined {
  return isDatabaseUnavailable(error) ? databaseUnavailable(error) : undefined;
}
