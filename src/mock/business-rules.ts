import { UUID_PATTERN } from '../msv3/model.js';
import { validationFault } from './faults.js';

/**
 * Rules from the XSD annotations that the schema cannot express and the codecs therefore leave to the
 * receiver (duplicates, id formats). Breaking one is a `ValidationFault`, as for a schema violation.
 */

export function rejectDuplicates(values: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) {
      throw validationFault(
        `${what} ${value} occurs more than once`,
        `${what} ${value} ist mehrfach angegeben.`,
      );
    }
    seen.add(value);
  }
}

export function requireUuid(value: string, what: string): void {
  if (!UUID_PATTERN.test(value)) {
    throw validationFault(
      `${what} '${value.slice(0, 40)}' is not a uuid`,
      `${what} hat kein gültiges Format (erwartet: UUID).`,
    );
  }
}
