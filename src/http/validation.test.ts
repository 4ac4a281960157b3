import fc from 'fast-check';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { describeSchemaErrors, pointerToPath, type SchemaError, stringsOnlyCheck } from './validation.js';

const Order = Type.Object(
  {
    wholesaler: Type.String(),
    kind: Type.Optional(Type.Union([Type.Literal('normal'), Type.Literal('special')])),
    target: Type.Optional(Type.Union([Type.String(), Type.Object({ id: Type.Integer() })])),
    url: Type.Optional(Type.String({ format: 'uri' })),
    note: Type.Optional(Type.String({ maxLength: 3 })),
    items: Type.Optional(Type.Array(Type.Object({ qty: Type.Integer({ maximum: 9 }) }))),
  },
  { additionalProperties: false },
);
const check = Compile(Order);
const describeBody = (value: unknown) => describeSchemaErrors(check.Errors(value) as SchemaError[], 'body');

describe('describing schema errors', () => {
  it('writes JSON pointers as field paths', () => {
    expect(pointerToPath('')).toBe('');
    expect(pointerToPath('/items/3/pzn')).toBe('items[3].pzn');
    expect(pointerToPath('/a~1b/c~0d')).toBe('a/b.c~d');
  });

  it('lists the allowed literals of a union', () => {
    expect(describeBody({ wholesaler: 'x', kind: 'odd' })).toEqual({
      message: 'kind must be one of "normal", "special"',
      param: 'kind',
    });
  });

  it('says a value fits none of the shapes of a mixed union', () => {
    expect(describeBody({ wholesaler: 'x', target: 5 })).toEqual({
      message: 'target does not match any allowed form',
      param: 'target',
    });
  });

  it('names formats, lengths and bounds', () => {
    expect(describeBody({ wholesaler: 'x', url: 'no url' }).message).toBe('url must be a valid uri');
    expect(describeBody({ wholesaler: 'x', note: 'long' }).message).toBe(
      'note must be at most 3 characters long',
    );
    expect(describeBody({ wholesaler: 'x', items: [{ qty: 10 }] })).toEqual({
      message: 'items[0].qty must be <= 9',
      param: 'items[0].qty',
    });
  });

  it('describes a body of the wrong type without a param', () => {
    expect(describeBody([])).toEqual({ message: 'The request body must be an object' });
  });

  it('labels query, path and header fields', () => {
    const errors = Compile(Type.Object({ wholesaler: Type.String() })).Errors({}) as SchemaError[];
    expect(describeSchemaErrors(errors, 'querystring')).toEqual({
      message: 'query parameter wholesaler is required',
      param: 'wholesaler',
    });
    expect(describeSchemaErrors(errors, 'headers').message).toBe('header wholesaler is required');
  });
});

describe('skipping Value.Convert for string-only header schemas', () => {
  const Headers = Type.Object({
    'x-msv3-username': Type.Optional(Type.String()),
    'x-msv3-password': Type.Optional(Type.String({ description: 'secret' })),
    'idempotency-key': Type.Optional(Type.String()),
  });

  it('only says "unchanged" when Value.Convert would change nothing', () => {
    const check = stringsOnlyCheck(Headers);
    expect(check).toBeDefined();
    const headerValue = fc.oneof(
      fc.string(),
      fc.constant(undefined),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.bigInt(),
    );
    const headers = fc.dictionary(
      fc.constantFrom(
        'x-msv3-username',
        'x-msv3-password',
        'idempotency-key',
        'x-api-key',
        'host',
        'x-msv3-passwordx',
      ),
      headerValue,
    );
    fc.assert(
      fc.property(headers, (input) => {
        if (check!(input)) {
          const copy = structuredClone(input);
          expect(Value.Convert(Headers, copy)).toEqual(input);
          expect(copy).toEqual(input);
        }
      }),
      { numRuns: 2000 },
    );
    expect(check!({ 'x-msv3-username': 'a', host: 'h' })).toBe(true);
    expect(check!({ 'x-msv3-username': ['a', 'b'] })).toBe(false);
  });

  it('is not used for schemas Convert would change strings of, or with pattern characters in names', () => {
    expect(stringsOnlyCheck(Type.Object({ page: Type.Integer() }))).toBeUndefined();
    expect(
      stringsOnlyCheck(Type.Object({ kind: Type.Union([Type.Literal('a'), Type.String()]) })),
    ).toBeUndefined();
    expect(stringsOnlyCheck(Type.Object({ 'a.b': Type.String() }))).toBeUndefined();
    expect(
      stringsOnlyCheck(Type.Object({ a: Type.String() }, { additionalProperties: Type.Number() })),
    ).toBeUndefined();
  });
});
