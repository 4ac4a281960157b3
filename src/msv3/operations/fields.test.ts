import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pznFromWire, pznToWire } from '../model.js';
import { DecodeFailure } from '../xml/read.js';
import {
  booleanValue,
  codePointLength,
  enumAt,
  enumValue,
  intAt,
  intValue,
  isDateTime,
  isDruckbareKennung,
  isUuid,
  pznToWireText,
  pznValue,
  USUAL_DATE_TIME_SOURCE,
} from './fields.js';

describe('lexical readers', () => {
  it.each([
    ['2025-03-18T14:30:00+01:00', true],
    ['2025-03-18T14:30:00', true],
    ['2025-03-18T14:30:00.125Z', true],
    ['-0044-03-15T12:00:00-14:00', true],
    ['12025-01-01T00:00:00Z', true],
    ['2024-02-29T24:00:00', true],
    ['2025-02-29T10:00:00', false],
    ['2025-13-01T10:00:00', false],
    ['2025-03-18T24:00:01', false],
    ['2025-03-18T10:60:00', false],
    ['2025-03-18 10:00:00', false],
    ['2025-03-18T10:00:00+14:30', false],
    ['0000-01-01T00:00:00', false],
    ['02025-01-01T00:00:00', false],
    ['2025-03-18T10:00:00.', false],
    ['2025-03-18', false],
    ['', false],
  ])('judges %s as an xs:dateTime: %s', (value, valid) => {
    expect(isDateTime(value)).toBe(valid);
  });

  it('matches as a usual date-time only texts that are xs:dateTime values, and the usual ones all', () => {
    const usual = new RegExp(`^(?:${USUAL_DATE_TIME_SOURCE})$`);
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    // Fields near and past their bounds (day 31 of a 30-day month, hour 24, offset 14:30, year 0000).
    const candidate = fc
      .record({
        year: fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        month: two(13),
        day: two(32),
        hour: two(25),
        minute: two(60),
        second: two(60),
        fraction: fc.constantFrom('', '.5', '.000', '.', '.1x'),
        offset: fc.constantFrom('', 'Z', '+01:00', '-02:00', '+14:00', '-14:01', '+13:59', '+1:00', 'z'),
      })
      .map((f) => `${f.year}-${f.month}-${f.day}T${f.hour}:${f.minute}:${f.second}${f.fraction}${f.offset}`);
    const text = fc.oneof(candidate, fc.string({ maxLength: 30 }), fc.stringMatching(/^[-0-9T:.Z+ ]{0,30}$/));
    let matched = 0;
    fc.assert(
      fc.property(text, (value) => {
        if (!usual.test(value)) return;
        matched++;
        expect(isDateTime(value)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
    expect(matched).toBeGreaterThan(100);
    // The usual form is what servers write: all of these need no check of their own.
    for (const value of [
      '2025-03-18T14:30:00+01:00',
      '2025-12-31T23:59:59Z',
      '2024-02-28T00:00:00.125-14:00',
    ])
      expect(usual.test(value)).toBe(true);
    // Valid but unusual: left to the full check.
    for (const value of [
      '2024-02-29T10:00:00',
      '2024-02-29T24:00:00',
      '-0044-03-15T12:00:00',
      '12025-01-01T00:00:00Z',
    ])
      expect([usual.test(value), isDateTime(value)]).toEqual([false, true]);
  });

  it('reads integers with sign, leading zeros and surrounding whitespace, within bounds', () => {
    expect(intValue(' +0042\n', 'x', 1, 99)).toBe(42);
    expect(() => intValue('4 2', 'x', 1, 99)).toThrow("x: '4 2' is not an integer");
    expect(() => intValue('100', 'x', 1, 99)).toThrow('x: 100 is outside 1..99');
    expect(() => intValue('-', 'x', -9, 9)).toThrow(DecodeFailure);
    expect(() => intValue('99999999999999999999', 'x', 1, 99)).toThrow('outside');
  });

  it('reads a whole text as an integer exactly as it reads the same text within a document', () => {
    const read = (f: () => number) => {
      try {
        return f();
      } catch (error) {
        expect(error).toBeInstanceOf(DecodeFailure);
        return (error as Error).message;
      }
    };
    const text = fc.oneof(
      fc.stringMatching(/^[0-9]{1,12}$/),
      fc.stringMatching(/^[ +\-0-9]{0,11}$/),
      fc.string({ maxLength: 11 }),
    );
    fc.assert(
      fc.property(
        text,
        fc.integer({ min: -5, max: 50 }),
        fc.integer({ min: 0, max: 999_999 }),
        (raw, min, max) => {
          const document = `<m:Menge>${raw}</m:Menge>`;
          expect(read(() => intValue(raw, 'Menge', min, max))).toBe(
            read(() => intAt(document, 9, 9 + raw.length, 'Menge', min, max)),
          );
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reads booleans in all four lexical forms and nothing else', () => {
    expect(['true', ' 1 ', 'false', '0'].map((v) => booleanValue(v, 'b'))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(() => booleanValue('TRUE', 'b')).toThrow("b: 'TRUE' is not a boolean");
  });

  it('returns the allowed constant for an enum value, tolerating surrounding whitespace', () => {
    expect(enumValue(' Normal ', ['Normal', 'Verbund'], 'Typ')).toBe('Normal');
    expect(() => enumValue('normal', ['Normal'], 'Typ')).toThrow("Typ: 'normal' is not one of Normal");
  });

  it('reads an enum value in place, within a document, exactly like a slice-and-lookup', () => {
    // Values of one length (compared one by one), long ones (compared in place), and prefixes.
    const allowed = [
      'NurDirekt',
      'KeinBezug',
      'Nachlieferung',
      'HerstellerNichtLieferbar',
      'Nachliefer',
      'N',
    ];
    const reference = (raw: string) => {
      const k = allowed.indexOf(raw) !== -1 ? allowed.indexOf(raw) : allowed.indexOf(raw.trim());
      return k === -1 ? undefined : allowed[k];
    };
    const text = fc.oneof(
      fc.constantFrom(...allowed),
      fc.constantFrom(...allowed).map((v) => ` ${v}\n`),
      fc.constantFrom(...allowed).map((v) => `\u00a0${v}`),
      fc.string({ maxLength: 30 }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 5 }), text, fc.string({ maxLength: 5 }), (before, raw, after) => {
        const s = `${before}${raw}${after}`;
        const end = before.length + raw.length;
        let read: string | undefined;
        try {
          read = enumAt(s, before.length, end, allowed, 'Grund');
        } catch (error) {
          expect(error).toBeInstanceOf(DecodeFailure);
        }
        expect(read).toBe(reference(raw));
      }),
      { numRuns: 2000 },
    );
  });

  it('converts PZNs exactly like model.ts in both directions', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\+?[0-9]{1,18}$/), (wire) => {
        expect(pznValue(wire, 'p')).toBe(pznFromWire(wire));
      }),
    );
    // The usual texts (one to eight digits, leading zeros among them) and the same with whitespace.
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,8}$/), fc.constantFrom('', ' ', '\n  '), (wire, space) => {
        expect(pznValue(`${space}${wire}${space}`, 'p')).toBe(pznFromWire(wire));
      }),
    );
    expect(pznValue('0000000', 'p')).toBe('00000000');
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,18}$/), (pzn) => {
        expect(pznToWireText(pzn)).toBe(pznToWire(pzn));
      }),
    );
    expect(() => pznValue('-1', 'p')).toThrow("p: '-1' is not a PZN");
    expect(() => pznToWireText('12a')).toThrow(RangeError);
  });

  it('recognises uuids, printable ids and counts characters by code point', () => {
    expect(isUuid('3F2B8C1E-6a7d-4e0f-9b1a-2c3d4e5f6a7b')).toBe(true);
    expect(isUuid('3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7')).toBe(false);
    expect(isUuid('3f2b8c1e-6a7d-4e0f-9b1a_2c3d4e5f6a7b')).toBe(false);
    expect(isDruckbareKennung('K1+-_')).toBe(true);
    expect(isDruckbareKennung('k1')).toBe(false);
    expect(isDruckbareKennung('X'.repeat(21))).toBe(false);
    expect(codePointLength('a😀b')).toBe(3);
  });
});
