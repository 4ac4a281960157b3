import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { pznCheckDigit } from '../msv3/model.js';
import { invalidPzn, refuseInvalidPzns } from './pzn-check.js';

const stem = fc.integer({ min: 0, max: 9_999_999 }).map((n) => String(n).padStart(7, '0'));
const digit = fc.integer({ min: 0, max: 9 });

describe('PZN check digits', () => {
  it('accepts published PZNs, the sandbox scenario PZNs among them', () => {
    for (const pzn of ['04114918', '09990027', '09990091', '09990122', '01234562', '12345678'])
      expect(invalidPzn(pzn), pzn).toBeNull();
  });

  test.prop([stem, digit])(
    'takes exactly one last digit for seven digits, or none when the sum leaves 10',
    (start, last) => {
      const expected = pznCheckDigit(`${start}0`);
      const problem = invalidPzn(`${start}${last}`);
      if (expected === null) {
        expect(problem).toMatchObject({ reason: 'not_issuable', expected_check_digit: null });
      } else if (last === expected) {
        expect(problem).toBeNull();
      } else {
        expect(problem).toMatchObject({
          reason: 'wrong_check_digit',
          expected_check_digit: String(expected),
        });
        expect(problem?.message).toContain(`(${start}${expected})`);
      }
    },
  );

  test.prop([stem, digit, digit])(
    'catches every single-digit typo and every swap of two neighbouring digits',
    (start, position, replacement) => {
      const right = pznCheckDigit(`${start}0`);
      fc.pre(right !== null);
      const pzn = `${start}${right}`;
      const typo = `${pzn.slice(0, position % 7)}${replacement}${pzn.slice((position % 7) + 1)}`;
      if (typo !== pzn) expect(invalidPzn(typo)).not.toBeNull();
      const at = position % 6;
      const swapped = `${pzn.slice(0, at)}${pzn[at + 1]}${pzn[at]}${pzn.slice(at + 2)}`;
      if (swapped !== pzn) expect(invalidPzn(swapped)).not.toBeNull();
    },
  );

  it('refuses a request naming the first wrong item, short PZNs padded first', () => {
    expect(() => refuseInvalidPzns([{ pzn: '4114918' }, { pzn: '17' }], 'phoenix')).not.toThrow();
    expect(() =>
      refuseInvalidPzns([{ pzn: '4114918' }, { pzn: '4114917' }, { pzn: '1' }], 'phoenix'),
    ).toThrow(
      expect.objectContaining({
        kind: 'invalid_request',
        message:
          '`items[1].pzn` 04114917 has a wrong check digit: a PZN starting with 0411491 ends in 8 (04114918). Nothing was sent to the wholesaler.',
        options: expect.objectContaining({ param: 'items[1].pzn', wholesaler: 'phoenix' }),
      }),
    );
  });
});

describe('the check digit', () => {
  test.prop([stem])(
    'is the sum of the first seven digits weighted 1 to 7, modulo 11 (none for 10)',
    (start) => {
      const sum = [...start].reduce((total, d, i) => total + Number(d) * (i + 1), 0);
      expect(pznCheckDigit(`${start}0`)).toBe(sum % 11 === 10 ? null : sum % 11);
    },
  );
});
