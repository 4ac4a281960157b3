import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pznFromWire, pznToWire } from '../model.js';
import { DecodeFailure } from '../xml/read.js';
import {
  booleanValue,
  codePointLength,
  enumAt,
  enumValue,
  intValue,
  isDateTime,
  isDruckbareKennung,
  isUuid,
  pznToWireText,
  pznValue,
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

  it('reads integers with sign, leading zeros and surrounding whitespace, within bounds', () => {
    expect(intValue(' +0042\n', 'x', 1, 99)).toBe(42);
    expect(() => intValue('4 2', 'x', 1, 99)).toThrow("x: '4 2' is not an integer");
    expect(() => intValue('100', 'x', 1, 99)).toThrow('x: 100 is outside 1..99');
    expect(() => intValue('-', 'x', -9, 9)).toThrow(DecodeFailure);
    expect(() => intValue('99999999999999999999', 'x', 1, 99)).toThrow('outside');
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
