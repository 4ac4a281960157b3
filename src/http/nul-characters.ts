/**
 * NUL characters (U+0000: `%00` in a URL, `\u0000` in JSON) in request values. No id, filter or field of
 * this API holds one: MSV3 is XML, which cannot carry U+0000, and PostgreSQL cannot store or even compare
 * text with it (a query fails with "invalid byte sequence"). So a request with one is a 400 naming the
 * value (docs/errors.md), before any route looks anything up.
 */

/** The JSON pointer of the first path or query value with a NUL character, if any. */
export function nulInValues(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  for (const [name, value] of Object.entries(input)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && v.includes('\u0000'))) return pointer([name]);
  }
  return undefined;
}

/**
 * The JSON pointer of the first string (or field name) with a NUL character in a parsed JSON body, if any.
 * `text` is the body as sent: JSON can only carry U+0000 escaped, so a body without `u0000` is not walked.
 */
export function nulInJson(text: string, parsed: unknown): string | undefined {
  if (!text.includes('u0000')) return undefined;
  const found = walk(parsed, []);
  return found === undefined ? undefined : pointer(found);
}

function walk(value: unknown, at: string[]): string[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? at : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (key.includes('\u0000')) return at;
    const found = walk(inner, [...at, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

function pointer(segments: string[]): string {
  return segments.map((s) => `/${s.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}
