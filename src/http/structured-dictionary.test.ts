import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { parseDictionary, StructuredFieldError } from './structured-dictionary.js';

/** RFC 8941 serialisation of the members this reader returns, for the round trip below. */
function serialiseString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

const key = fc.stringMatching(/^[a-z*][a-z0-9_\-.*]{0,12}$/);
const sfString = fc.string({ unit: fc.constantFrom(...' !"#$%&\\abcXYZ09~:;,()='.split('')), maxLength: 20 });
const bytes = fc.uint8Array({ maxLength: 40 });
const member = fc.oneof(
  sfString.map((value) => ({ text: serialiseString(value), value: { type: 'string', value } })),
  bytes.map((value) => ({
    text: `:${Buffer.from(value).toString('base64')}:`,
    value: { type: 'bytes', value: Buffer.from(value) },
  })),
  fc.array(sfString, { maxLength: 3 }).map((items) => ({
    text: `(${items.map(serialiseString).join(' ')})`,
    value: { type: 'inner-list', items: items.map((value) => ({ type: 'string', value })) },
  })),
);

describe('parseDictionary', () => {
  test.prop([fc.array(fc.tuple(key, member), { maxLength: 6 }), fc.constantFrom(',', ', ', ' ,\t ')])(
    'reads back every dictionary of strings, byte sequences and inner lists it is given',
    (members, separator) => {
      const text = members.map(([k, m]) => `${k}=${m.text}`).join(separator.replace(/^ +/, ''));
      expect(parseDictionary(text)).toEqual(members.map(([k, m]) => ({ key: k, value: m.value })));
    },
  );

  test.prop([fc.string({ maxLength: 60 })])(
    'either reads any text or throws a StructuredFieldError',
    (text) => {
      try {
        parseDictionary(text);
      } catch (error) {
        expect(error).toBeInstanceOf(StructuredFieldError);
      }
    },
  );

  it('reads bare keys as true, tokens, integers, booleans, and drops parameters', () => {
    expect(parseDictionary('a, b=tok/1;q=2, c=-42, d=?0;x')).toEqual([
      { key: 'a', value: { type: 'boolean', value: true } },
      { key: 'b', value: { type: 'token', value: 'tok/1' } },
      { key: 'c', value: { type: 'integer', value: -42 } },
      { key: 'd', value: { type: 'boolean', value: false } },
    ]);
  });

  it.each([
    ['Phoenix=("a" "b")', 0, 'a key: a lower-case letter or "*" first'],
    ['phoenix=("a" "b"),', 18, 'a member after ","'],
    ['phoenix=("a" "b" ', 17, '")" closing the inner list'],
    ['phoenix=("a\\n")', 12, '\\" or \\\\ after a backslash'],
    ['phoenix=:not base64!:', 9, 'base64 inside ":…:"'],
    ['phoenix=("a" "b") alliance', 18, '"," between members'],
  ])('says where %s goes wrong, without quoting it', (text, position, expected) => {
    const error = (() => {
      try {
        parseDictionary(text);
      } catch (e) {
        return e as StructuredFieldError;
      }
      throw new Error('parsed');
    })();
    expect(error).toBeInstanceOf(StructuredFieldError);
    expect({ position: error.position, expected: error.expected }).toEqual({ position, expected });
  });
});
