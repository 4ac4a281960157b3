import { ApiError } from '../core/errors.js';
import { isDatabaseUnavailable } from '../store/database-unavailable.js';

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
