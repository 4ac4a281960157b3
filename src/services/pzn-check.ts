import { ApiError } from '../core/errors.js';
import { normalisePzn, type Pzn, pznCheckDigit } from '../msv3/model.js';

/**
 * The PZN's last digit is a check digit (docs/glossary.md "PZN"): a number whose last digit is not the
 * one its first seven call for is a typo, and it is never sent to a wholesaler. Availability reports it
 * per item (`invalidPzn`), so the other articles are still asked; orders and returns refuse the request
 * (`refuseInvalidPzns`), since sending the rest would order or return something else than meant.
 */

export interface InvalidPzn {
  /** `wrong_check_digit`: another last digit would make it a PZN; `not_issuable`: no digit would. */
  reason: 'wrong_check_digit' | 'not_issuable';
  /** The digit the first seven call for; null when no PZN starts with them. */
  expected_check_digit: string | null;
  /** One sentence naming the number (and, for a wrong check digit, the PZN it would be). */
  message: string;
}

/** Why an 8-digit PZN is not one, or null when its check digit is right. */
export function invalidPzn(pzn: Pzn): InvalidPzn | null {
  const expected = pznCheckDigit(pzn);
  if (expected === pzn.charCodeAt(7) - 48) return null;
  const start = pzn.slice(0, 7);
  return expected === null
    ? {
        reason: 'not_issuable',
        expected_check_digit: null,
        message: `${pzn} is no PZN: no check digit fits its first seven digits ${start}, so no article has a PZN starting with them.`,
      }
    : {
        reason: 'wrong_check_digit',
        expected_check_digit: String(expected),
        message: `${pzn} has a wrong check digit: a PZN starting with ${start} ends in ${expected} (${start}${expected}).`,
      };
}

/** A 400 naming the first item whose PZN is no PZN (`items[3].pzn`); nothing is sent then. */
export function refuseInvalidPzns(
  items: readonly { pzn: string }[],
  wholesaler: string,
  list = 'items',
): void {
  items.forEach((item, index) => {
    const problem = invalidPzn(normalisePzn(item.pzn));
    if (problem === null) return;
    const param = `${list}[${index}].pzn`;
    throw new ApiError(
      'invalid_request',
      `\`${param}\` ${problem.message} Nothing was sent to the wholesaler.`,
      { param, wholesaler },
    );
  });
}
