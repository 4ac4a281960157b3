import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWithoutPoisonableKeys } from './json-body.js';

/** Every key of a JSON text, as JSON.parse reads it (escapes resolved). */
function keysOf(text: string): string[] {
  const keys: string[] = [];
  JSON.parse(text, function (this: unknown, key: string, value: unknown) {
    if (key !== '' && !Array.isArray(this)) keys.push(key);
    return value;
  });
  return keys;
}

/** A key as JSON writes it, or with some characters as \u escapes. */
const spelt = (key: string) =>
  fc
    .array(fc.boolean(), { minLength: key.length, maxLength: key.length })
    .map((escaped) =>
      [...key]
        .map((c, i) => (escaped[i] ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
        .join(''),
    );

const poisonKey = fc.oneof(spelt('__proto__'), spelt('constructor'));

/** JSON texts, some with a `__proto__` or `constructor` key (as written or escaped) spliced in. */
const jsonText = fc.oneof(
  fc.json(),
  fc
    .tuple(fc.dictionary(fc.string(), fc.jsonValue()), poisonKey, fc.jsonValue())
    .map(([object, key, value]) => {
      const rest = JSON.stringify(object).slice(1); // the other members and the closing brace
      return `{"${key}":${JSON.stringify(value)}${rest === '}' ? '' : ','}${rest}`;
    }),
);

describe('parseWithoutPoisonableKeys', () => {
  it('parses as JSON.parse does, and leaves every text with a __proto__ or constructor key to the full parser', () => {
    let parsed = 0;
    let refused = 0;
    fc.assert(
      fc.property(jsonText, (text) => {
        const value = parseWithoutPoisonableKeys(text);
        const poisonable = keysOf(text).some((key) => key === '__proto__' || key === 'constructor');
        if (poisonable) {
          refused++;
          expect(value).toBeUndefined();
        } else if (value !== undefined) {
          parsed++;
          expect(value).toEqual(JSON.parse(text));
        }
      }),
      { numRuns: 3_000 },
    );
    expect(parsed).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });

  it('leaves invalid JSON and a byte-order mark to the full parser', () => {
    expect(parseWithoutPoisonableKeys('{"items": [')).toBeUndefined();
    expect(parseWithoutPoisonableKeys('\ufeff{"a":1}')).toBeUndefined();
    expect(parseWithoutPoisonableKeys('{"a":"\\u0041"}')).toBeUndefined();
    expect(parseWithoutPoisonableKeys('{"wholesaler":"phoenix","items":[]}')).toEqual({
      wholesaler: 'phoenix',
      items: [],
    });
  });
});
