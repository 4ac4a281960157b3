import { type Pzn, pznCheckDigit } from '../src/msv3/model.js';

/**
 * `count` distinct PZNs with right check digits, the first seven digits counting up from `firstStem`
 * (stems no check digit fits are skipped): many valid article numbers for tests that send lists.
 */
export function validPzns(count: number, firstStem = 1_000_000): Pzn[] {
  const pzns: Pzn[] = [];
  for (let stem = firstStem; pzns.length < count; stem++) {
    const start = String(stem).padStart(7, '0');
    const digit = pznCheckDigit(`${start}0`);
    if (digit !== null) pzns.push(`${start}${digit}`);
  }
  return pzns;
}
