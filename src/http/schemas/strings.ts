import { type TStringOptions, Type } from 'typebox';

/**
 * String schemas for what a client writes and the gateway sends to a wholesaler or stores.
 *
 * MSV3 travels as XML 1.0, which can carry only the `Char` production: #x9 | #xA | #xD | [#x20-#xD7FF] |
 * [#xE000-#xFFFD] | [#x10000-#x10FFFF]. The XML writer drops anything else (defence in depth), so a value
 * with such a character would reach the wholesaler changed; these schemas refuse it up front (400
 * `invalid_request` naming the field).
 *
 * The pattern means the same with and without the regular expression `u` flag (TypeBox and Ajv compile
 * with it; OpenAPI tools often without): it refuses the C0 controls other than tab, LF and CR, U+FFFE,
 * U+FFFF, and UTF-16 surrogates that are not part of a pair (a JSON `"\ud800"` arrives as one). With `u`
 * a pair is one code point and a lone surrogate is a code point of its own; without it both are code
 * units and the look-arounds tell a lone one from a pair.
 */
export const XML_TEXT_PATTERN =
  '^(?![\\s\\S]*(?:[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]))' +
  '[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF]*$';

/** As XML_TEXT_PATTERN, and at least one character that is not white space. */
export const NON_BLANK_XML_TEXT_PATTERN = `^(?=[\\s\\S]*\\S)${XML_TEXT_PATTERN.slice(1)}`;

const PATTERN_PROBLEMS: ReadonlyMap<string, string> = new Map([
  [
    XML_TEXT_PATTERN,
    'must not contain control characters (other than tab, line feed and carriage return), U+FFFE, U+FFFF or unpaired surrogates',
  ],
  [
    NON_BLANK_XML_TEXT_PATTERN,
    'must contain a character other than white space and no control characters (other than tab, line feed and carriage return), U+FFFE, U+FFFF or unpaired surrogates',
  ],
]);

/** What breaking one of the patterns above means, for error messages; undefined for other patterns. */
export function describePattern(pattern: string): string | undefined {
  return PATTERN_PROBLEMS.get(pattern);
}

/** Free text that is sent to a wholesaler or stored: any string XML 1.0 can carry unchanged. */
export function XmlText(options: Omit<TStringOptions, 'pattern'> = {}) {
  return Type.String({ ...options, pattern: XML_TEXT_PATTERN });
}

/** XmlText with at least one character that is not white space (names). */
export function NonBlankXmlText(options: Omit<TStringOptions, 'pattern'> = {}) {
  return Type.String({ ...options, pattern: NON_BLANK_XML_TEXT_PATTERN });
}

/**
 * A calendar date `YYYY-MM-DD` that exists (`format: 'date'`, RFC 3339 full-date: month 01–12, the day
 * within that month, 29 February only in leap years). A pattern alone lets `2026-02-30` through.
 */
export function CalendarDate(options: Omit<TStringOptions, 'format' | 'pattern'> = {}) {
  return Type.String({ ...options, format: 'date' });
}
