import { ERROR_CATALOGUE, type ErrorKind } from '../core/errors.js';

export interface ErrorCodeEntry {
  error: ErrorKind;
  error_code: string;
  status: number;
  description: string;
}

/** The catalogue as a list, in code order (the OpenAPI `x-error-codes` extension). */
export function errorCodeList(): ErrorCodeEntry[] {
  return (Object.entries(ERROR_CATALOGUE) as [ErrorKind, (typeof ERROR_CATALOGUE)[ErrorKind]][])
    .map(([error, { code, status, description }]) => ({ error, error_code: code, status, description }))
    .sort((a, b) => a.error_code.localeCompare(b.error_code));
}

/** The catalogue as a Markdown table: the reference's errors section (openapi-tags.ts), docs/error-catalogue.md. */
export function errorCatalogueTable(): string {
  const rows = errorCodeList().map(
    (e) => `| \`${e.error}\` | ${e.error_code} | ${e.status} | ${e.description.replace(/\|/g, '\\|')} |`,
  );
  return ['| error | error_code | status | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
