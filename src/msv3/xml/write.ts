/**
 * Escaping for hand-built XML. Codecs build envelopes with template strings (fast, exact control over
 * prefixes and qualification) and pass every value through one of these two functions.
 */

const TEXT_SPECIAL = /[&<>\r]/;
const ATTR_SPECIAL = /[&<>"\r\n\t]/;
// XML 1.0 forbids these code points even when escaped; they are dropped rather than sent.
const INVALID_XML_CHARS =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function stripInvalid(value: string): string {
  INVALID_XML_CHARS.lastIndex = 0;
  return INVALID_XML_CHARS.test(value) ? value.replace(INVALID_XML_CHARS, '') : value;
}

/** Escapes character data for element content. `\r` is escaped so it survives line-end normalisation. */
export function escapeText(value: string): string {
  const clean = stripInvalid(value);
  if (!TEXT_SPECIAL.test(clean)) return clean;
  return clean.replace(/[&<>\r]/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#13;',
  );
}

/** Escapes an attribute value for use inside double quotes; whitespace is escaped to survive normalisation. */
export function escapeAttr(value: string): string {
  const clean = stripInvalid(value);
  if (!ATTR_SPECIAL.test(clean)) return clean;
  return clean.replace(/[&<>"\r\n\t]/g, (c) => {
    switch (c) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      case '\r':
        return '&#13;';
      case '\n':
        return '&#10;';
      default:
        return '&#9;';
    }
  });
}
