import fc from 'fast-check';
import type { Pzn } from '../../model.js';

/**
 * Arbitraries for the simple MSV3 types used by the contract, take-back, delivery-notice, return and
 * document codecs. Every value is valid for the XSD; lengths count code points, as the XSD does.
 */

/** One code point XML 1.0 can carry, biased towards what needs escaping or must survive normalisation. */
const xmlChar: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('<', '>', '&', '"', "'", '\r', '\n', '\t', ' ', ']', 'ä', 'ß', '€', '\u00a0'),
  },
  { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0x7f, max: 0xd7ff }).map((c) => String.fromCodePoint(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0xe000, max: 0xfffd }).map((c) => String.fromCodePoint(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
);

/** Free text of `minLength..maxLength` characters, including markup characters, CR, astral characters. */
export function freeText(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc.string({ unit: xmlChar, minLength, maxLength });
}

export const uuid: fc.Arbitrary<string> = fc
  .tuple(fc.uuid(), fc.boolean())
  .map(([u, upper]) => (upper ? u.toUpperCase() : u));

/** 8-digit PZNs (leading zeros included) and longer codes without a leading zero (EAN-like). */
export const pzn: fc.Arbitrary<Pzn> = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[0-9]{8}$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[1-9][0-9]{8,17}$/) },
);

export const int32: fc.Arbitrary<number> = fc.integer({ min: -2_147_483_648, max: 2_147_483_647 });
export const positiveInt32: fc.Arbitrary<number> = fc.integer({ min: 1, max: 2_147_483_647 });
export const supportId: fc.Arbitrary<number> = fc.integer({ min: 1, max: 999_999 });

/** DruckbareKennung `[A-Z0-9+\-_]{1,20}`. */
export const druckbareKennung: fc.Arbitrary<string> = fc.stringMatching(/^[A-Z0-9+\-_]{1,20}$/);

/** LieferscheinnummerType (and GHReferenzID): 1–30 of `a-z A-Z 0-9 # + * / - _`. */
export const lieferscheinnummer: fc.Arbitrary<string> = fc.stringMatching(/^[a-zA-Z0-9#+*/\-_]{1,30}$/);

/** BarcodeReferenzType: digits, one marker of `* + # _ ?`, then note characters or `?`; 1–30 in all. */
export const barcodeReferenz: fc.Arbitrary<string> = fc
  .tuple(
    fc.stringMatching(/^[0-9]{0,10}$/),
    fc.constantFrom('*', '+', '#', '_', '?'),
    fc.stringMatching(/^[a-zA-Z0-9#+*/\-_?]{0,19}$/),
  )
  .map(([digits, marker, rest]) => digits + marker + rest);

/** KundenKennung `([a-zA-Z0-9]+\)?[a-zA-Z0-9]+`, at most 80 characters. */
export const kundenKennung: fc.Arbitrary<string> = fc
  .tuple(
    fc.option(fc.stringMatching(/^[a-zA-Z0-9]{1,30}$/), { nil: undefined }),
    fc.stringMatching(/^[a-zA-Z0-9]{1,40}$/),
  )
  .map(([branch, user]) => (branch === undefined ? user : `${branch}\\${user}`));

const two = (n: number): string => String(n).padStart(2, '0');

const timezone: fc.Arbitrary<string> = fc.oneof(
  fc.constant(''),
  fc.constant('Z'),
  fc
    .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 14 }), fc.integer({ min: 0, max: 59 }))
    .map(([sign, h, m]) => `${sign}${two(h)}:${two(h === 14 ? 0 : m)}`),
);

const year: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 9999 }).map((y) => String(y).padStart(4, '0')) },
  { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 999_999 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 9999 }).map((y) => `-${String(y).padStart(4, '0')}`) },
);

function daysIn(y: number, m: number): number {
  if (m === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

const calendarDay: fc.Arbitrary<string> = fc
  .tuple(year, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }))
  // BCE leap years differ between XSD 1.0 and 1.1, so negative years never get a 29 February.
  .map(
    ([y, m, d]) =>
      `${y}-${two(m)}-${two(Math.min(d, y.startsWith('-') && m === 2 ? 28 : daysIn(Number(y), m)))}`,
  );

/** xs:date with and without a time zone, including negative and five-digit years. */
export const xsdDate: fc.Arbitrary<string> = fc.tuple(calendarDay, timezone).map(([d, tz]) => d + tz);

const clockTime: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc
      .tuple(
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
      )
      .map(([h, m, s]) => `${two(h)}:${two(m)}:${two(s)}`),
  },
  { weight: 1, arbitrary: fc.constant('24:00:00') },
);

const fraction: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.stringMatching(/^\.[0-9]{1,9}$/) },
);

/** xs:dateTime with optional fraction and time zone. */
export const xsdDateTime: fc.Arbitrary<string> = fc
  .tuple(calendarDay, clockTime, fraction, timezone)
  .map(([d, t, f, tz]) => `${d}T${t}${t === '24:00:00' ? '' : f}${tz}`);

/** VertragsdatenZeit `hh:mm:00` (24:00:00 included). */
export const vertragsdatenZeit: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([h, m]) => `${two(h)}:${two(m)}:00`),
  },
  { weight: 1, arbitrary: fc.constant('24:00:00') },
);

/** An object with some optional keys left out (fast-check's `requiredKeys`). */
export function withOptional<T extends object>(
  model: { [K in keyof T]: fc.Arbitrary<T[K]> },
  required: (keyof T)[],
): fc.Arbitrary<T> {
  return fc.record(model, { requiredKeys: required }) as unknown as fc.Arbitrary<T>;
}
