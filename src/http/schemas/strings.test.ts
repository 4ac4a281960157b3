import { fc, test } from '@fast-check/vitest';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { withOpenApiDocument } from '../../../test/openapi-document.js';
import {
  CalendarDate,
  NON_BLANK_XML_TEXT_PATTERN,
  NonBlankXmlText,
  XML_TEXT_PATTERN,
  XmlText,
} from './strings.js';

/** The XML 1.0 `Char` production, code point by code point: the reference the pattern must agree with. */
function isXmlText(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false; // NaN at the end: lone too
      i++; // a pair: U+10000..U+10FFFF, all allowed
      continue;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return false;
    if (unit === 0x9 || unit === 0xa || unit === 0xd) continue;
    if (unit < 0x20 || unit === 0xfffe || unit === 0xffff) return false;
  }
  return true;
}

/** Any UTF-16 text, biased towards the edges: controls, surrogates (paired or not), U+FFFE/U+FFFF. */
const anyUnit = fc.oneof(
  fc.integer({ min: 0, max: 0x20 }),
  fc.integer({ min: 0xd7fe, max: 0xe001 }),
  fc.integer({ min: 0xfffc, max: 0xffff }),
  fc.integer({ min: 0, max: 0xffff }),
);
const anyText = fc.array(anyUnit, { maxLength: 12 }).map((units) => String.fromCharCode(...units));

describe('XML text pattern', () => {
  const unicode = new RegExp(XML_TEXT_PATTERN, 'u');
  const plain = new RegExp(XML_TEXT_PATTERN);

  test.prop([anyText], { numRuns: 2000 })(
    'accepts exactly the XML 1.0 characters, with and without the u flag',
    (value) => {
      expect(unicode.test(value)).toBe(isXmlText(value));
      expect(plain.test(value)).toBe(isXmlText(value));
    },
  );

  test.prop([anyText], { numRuns: 1000 })('NonBlankXmlText also asks for a non-space character', (value) => {
    const expected = isXmlText(value) && value.trim() !== '';
    expect(new RegExp(NON_BLANK_XML_TEXT_PATTERN, 'u').test(value)).toBe(expected);
    expect(Compile(NonBlankXmlText()).Check(value)).toBe(expected);
  });

  it('is what a compiled XmlText schema checks, together with its other options', () => {
    const check = Compile(XmlText({ minLength: 1, maxLength: 3 }));
    expect(check.Check('ab')).toBe(true);
    expect(check.Check('a\u{1F48A}')).toBe(true);
    expect(check.Check('\t\r\n')).toBe(true);
    expect(check.Check('')).toBe(false);
    expect(check.Check('abcd')).toBe(false);
    for (const bad of [
      '\u0000',
      'a\u0008',
      '\u000b',
      '\u000c',
      '\u001f',
      '\ud800',
      '\udc00a',
      '\ufffe',
      '\uffff',
    ])
      expect(check.Check(bad)).toBe(false);
  });
});

describe('CalendarDate', () => {
  const check = Compile(CalendarDate());
  const day = 86_400_000;

  test.prop(
    [
      fc.integer({
        min: Date.parse('0001-01-01T00:00:00Z') / day,
        max: Date.parse('9999-12-31T00:00:00Z') / day,
      }),
    ],
    {
      numRuns: 1000,
    },
  )('accepts every day of the calendar', (days) => {
    expect(check.Check(new Date(days * day).toISOString().slice(0, 10))).toBe(true);
  });

  test.prop(
    [fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 })],
    {
      numRuns: 2000,
    },
  )('accepts a YYYY-MM-DD text only when that day exists', (year, month, dayOfMonth) => {
    const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(dayOfMonth).padStart(2, '0')}`;
    const date = new Date(Date.UTC(2000, month - 1, dayOfMonth));
    date.setUTCFullYear(year);
    const exists =
      month >= 1 &&
      month <= 12 &&
      dayOfMonth >= 1 &&
      date.getUTCMonth() === month - 1 &&
      date.getUTCDate() === dayOfMonth;
    expect(check.Check(text)).toBe(exists);
  });

  it('refuses other shapes', () => {
    for (const bad of ['2026-2-01', '20260201', '2026-02-01T00:00:00', ' 2026-02-01', '２０２６-02-01'])
      expect(check.Check(bad)).toBe(false);
  });
});

describe('request strings in the OpenAPI document', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
  let doc: any;
  withOpenApiDocument((document) => {
    doc = document;
  });

  /** Every string schema in request bodies and parameters, by `METHOD path where.field`. */
  function requestStrings(): Map<string, Record<string, unknown>> {
    const found = new Map<string, Record<string, unknown>>();
    const walk = (schema: unknown, where: string) => {
      if (typeof schema !== 'object' || schema === null) return;
      const node = schema as Record<string, unknown>;
      if (node.type === 'string') found.set(where, node);
      for (const [key, value] of Object.entries(node.properties ?? {})) walk(value, `${where}.${key}`);
      if (node.items !== undefined) walk(node.items, `${where}[]`);
      for (const branch of [...((node.anyOf as unknown[]) ?? []), ...((node.oneOf as unknown[]) ?? [])])
        walk(branch, where);
    };
    // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const at = `${method.toUpperCase()} ${path}`;
        walk(operation.requestBody?.content?.['application/json']?.schema, `${at} body`);
        for (const parameter of operation.parameters ?? [])
          walk(parameter.schema, `${at} ${parameter.in}.${parameter.name}`);
      }
    }
    return found;
  }

  /** Strings that are only looked up (ids, cursors) or headers (HTTP cannot carry control characters). */
  const LOOKUP_ONLY = [
    /body\.wholesaler$/, // a wholesaler id: unknown ones are 404
    /body\.wholesalers\[\]$/,
    /query\.wholesaler$/,
    /query\.starting_after$/,
    /path\.(id|delivery_id|order_id)$/,
    /header\./,
    /body\.events\[\]$/, // checked against the event names (400 naming the entry)
  ];

  it('restricts every free-text request string to what XML 1.0 can carry', () => {
    const strings = requestStrings();
    expect(strings.size).toBeGreaterThan(20);
    const unrestricted = [...strings]
      .filter(([, s]) => s.pattern === undefined && s.format === undefined && s.enum === undefined)
      .filter(([, s]) => s.const === undefined)
      .map(([where]) => where)
      .filter((where) => !LOOKUP_ONLY.some((re) => re.test(where)));
    expect(unrestricted).toEqual([]);
    const free = [...strings].filter(([, s]) => s.pattern === XML_TEXT_PATTERN).map(([where]) => where);
    expect(free).toEqual(
      expect.arrayContaining([
        'POST /v1/returns body.items[].batch',
        'POST /v1/returns/announce body.items[].batch',
        'POST /v1/returns/announce body.company.bank_name',
        'POST /v1/returns/announce body.company.iban',
        'POST /v1/wholesalers/custom body.endpoint',
        'POST /v1/webhooks body.url',
      ]),
    );
  });

  it('declares dates as format date and writes patterns any ECMAScript engine compiles, with or without u', () => {
    const strings = requestStrings();
    expect(strings.get('POST /v1/returns body.items[].expiry_date')).toMatchObject({ format: 'date' });
    expect(strings.get('GET /v1/deliveries/history query.date_from')).toMatchObject({ format: 'date' });
    for (const [where, schema] of strings) {
      if (typeof schema.pattern !== 'string') continue;
      expect(() => new RegExp(schema.pattern as string), where).not.toThrow();
      expect(() => new RegExp(schema.pattern as string, 'u'), where).not.toThrow();
    }
  });

  it('documents a non-blank name for custom wholesalers', () => {
    expect(requestStrings().get('POST /v1/wholesalers/custom body.name')).toMatchObject({
      pattern: NON_BLANK_XML_TEXT_PATTERN,
    });
  });
});
