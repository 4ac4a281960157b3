import fc from 'fast-check';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { XmlText } from './schemas/strings.js';
import {
  describeSchemaErrors,
  numberTextCheck,
  pointerToPath,
  type SchemaError,
  stringsOnlyCheck,
  validatorCompiler,
} from './validation.js';

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
const validateBody = validatorCompiler({ schema: Order, httpPart: 'body', method: 'POST', url: '/x' }) as (
  input: unknown,
) => { error?: SchemaError[] };
/** Through the route validator, which names an object's known fields for suggestions. */
const describeBody = (value: unknown) => describeSchemaErrors(validateBody(value).error ?? [], 'body');

describe('describing schema errors', () => {
  it('writes JSON pointers as field paths', () => {
    expect(pointerToPath('')).toBe('');
    expect(pointerToPath('/items/3/pzn')).toBe('items[3].pzn');
    expect(pointerToPath('/a~1b/c~0d')).toBe('a/b.c~d');
  });

  it('lists the allowed literals of a union', () => {
    expect(describeBody({ wholesaler: 'x', kind: 'odd' })).toEqual({
      message: '`kind` must be one of: normal, special.',
      param: 'kind',
    });
  });

  it('says what kinds of value a mixed union takes, or names the wrong part of one', () => {
    expect(describeBody({ wholesaler: 'x', target: 5 })).toEqual({
      message: '`target` must be text or a JSON object.',
      param: 'target',
    });
    expect(describeBody({ wholesaler: 'x', target: { id: 'one' } })).toEqual({
      message: '`target.id` must be a whole number.',
      param: 'target.id',
    });
  });

  it('suggests the known field an unknown one looks like, and reports a misspelt field as such', () => {
    expect(describeBody({ wholesaler: 'x', nots: 'n' })).toEqual({
      message: '`nots` is not a known field; did you mean `note`?',
      param: 'nots',
    });
    expect(describeBody({ wholesalr: 'x' })).toEqual({
      message: '`wholesalr` is not a known field; did you mean `wholesaler`?',
      param: 'wholesalr',
    });
    expect(describeBody({ wholesaler: 'x', colour: 'red' }).message).toBe('`colour` is not a known field.');
  });

  it('counts in words that agree with the number', () => {
    const List = Type.Object({
      items: Type.Array(Type.Integer(), { minItems: 1, maxItems: 2 }),
      code: Type.String({ minLength: 1, maxLength: 1 }),
    });
    const list = (value: unknown) =>
      describeSchemaErrors(Compile(List).Errors(value) as SchemaError[], 'body').message;
    expect(list({ items: [], code: 'a' })).toBe('`items` needs at least 1 entry.');
    expect(list({ items: [1, 2, 3], code: 'a' })).toBe('`items` can have at most 2 entries.');
    expect(list({ items: [1], code: '' })).toBe('`code` must not be empty.');
    expect(list({ items: [1], code: 'ab' })).toBe('`code` must be at most 1 character long.');
  });

  it('names formats, lengths and bounds', () => {
    expect(describeBody({ wholesaler: 'x', url: 'no url' }).message).toBe(
      '`url` must be a URL such as https://example.com/hooks.',
    );
    expect(describeBody({ wholesaler: 'x', note: 'long' }).message).toBe(
      '`note` must be at most 3 characters long.',
    );
    expect(describeBody({ wholesaler: 'x', items: [{ qty: 10 }] })).toEqual({
      message: '`items[0].qty` must be at most 9.',
      param: 'items[0].qty',
    });
  });

  it('describes a body of the wrong type without a param', () => {
    expect(describeBody([])).toEqual({ message: 'The request body must be a JSON object.' });
  });

  it('labels query, path and header fields', () => {
    const errors = Compile(Type.Object({ wholesaler: Type.String() })).Errors({}) as SchemaError[];
    expect(describeSchemaErrors(errors, 'querystring')).toEqual({
      message: 'Query parameter `wholesaler` is required.',
      param: 'wholesaler',
    });
    expect(describeSchemaErrors(errors, 'headers').message).toBe('Header `wholesaler` is required.');
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

describe('handing the request part back', () => {
  it('leaves a part that passed as it came to Fastify, so request.headers stays the raw object', async () => {
    const app = Fastify();
    app.setValidatorCompiler(validatorCompiler);
    app.get(
      '/x',
      { schema: { headers: Type.Object({ 'x-msv3-username': Type.Optional(Type.String()) }) } },
      async (request) => ({ same: request.headers === request.raw.headers }),
    );
    const answer = await app.inject({ url: '/x', headers: { 'x-msv3-username': 'u' } });
    await app.close();
    expect(answer.json()).toEqual({ same: true });
  });

  it('hands back a value only when it is another object than the one passed in', () => {
    const validateHeaders = validatorCompiler({
      schema: Type.Object({ 'x-msv3-username': Type.Optional(Type.String()) }),
      httpPart: 'headers',
      method: 'GET',
      url: '/x',
    }) as (input: unknown) => object;
    expect('value' in validateHeaders({ 'x-msv3-username': 'u', host: 'h' })).toBe(false);
    const validateBodyDefault = validatorCompiler({
      schema: Type.String({ default: 'filled' }),
      httpPart: 'body',
      method: 'POST',
      url: '/x',
    }) as (input: unknown) => object;
    expect(validateBodyDefault(undefined)).toEqual({ value: 'filled' });
  });
});

describe('reading numbers from query text', () => {
  const Query = Type.Object(
    {
      wholesaler: Type.String(),
      limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      ratio: Type.Optional(Type.Number()),
    },
    { additionalProperties: false },
  );
  const validate = validatorCompiler({
    schema: Query,
    httpPart: 'querystring',
    method: 'GET',
    url: '/x',
  }) as (input: unknown) => { value?: unknown; error?: SchemaError[] };
  const describeQuery = (input: Record<string, unknown>) => {
    const { error } = validate(input);
    return error === undefined ? undefined : describeSchemaErrors(error, 'querystring');
  };

  /** What the request holds once the validator passed it: the value handed back, or its own object. */
  const passed = (input: Record<string, unknown>) => {
    const result = validate(input);
    expect(result.error).toBeUndefined();
    return 'value' in result ? result.value : input;
  };

  it('converts plain decimal text and fills defaults', () => {
    expect(passed({ wholesaler: 'p', limit: '7' })).toEqual({ wholesaler: 'p', limit: 7 });
    expect(passed({ wholesaler: 'p', limit: '007', ratio: '-0.25' })).toEqual({
      wholesaler: 'p',
      limit: 7,
      ratio: -0.25,
    });
    expect(passed({ wholesaler: 'p' })).toEqual({ wholesaler: 'p', limit: 20 });
  });

  it('refuses text Number() would read but that is not a plain decimal, naming the parameter', () => {
    for (const limit of [
      '1.5',
      '2.9',
      '0x10',
      '0b11',
      '0o7',
      ' 10',
      '10\t',
      '1e1',
      '+5',
      'true',
      '',
      'Infinity',
    ])
      expect(describeQuery({ wholesaler: 'p', limit })).toEqual({
        message: 'Query parameter `limit` must be a whole number.',
        param: 'limit',
      });
    for (const ratio of ['.5', '1.', '0x1', '1e-1', ' 1'])
      expect(describeQuery({ wholesaler: 'p', ratio })).toEqual({
        message: 'Query parameter `ratio` must be a number.',
        param: 'ratio',
      });
  });

  it('leaves range checks and repeated parameters to the schema', () => {
    expect(describeQuery({ wholesaler: 'p', limit: '0' })).toEqual({
      message: 'Query parameter `limit` must be at least 1.',
      param: 'limit',
    });
    expect(describeQuery({ wholesaler: 'p', limit: ['1', '2'] })?.param).toBe('limit');
  });

  it('agrees with the schema on every integer text: valid exactly when it is a decimal integer in range', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: -5, max: 105 }).map(String)),
        (limit) => {
          const ok = /^-?[0-9]+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= 100;
          expect(validate({ wholesaler: 'p', limit }).error === undefined).toBe(ok);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('is only set up for object schemas with integer or number properties', () => {
    expect(numberTextCheck(Type.Object({ a: Type.String() }))).toBeUndefined();
    expect(numberTextCheck(Type.String())).toBeUndefined();
    expect(numberTextCheck(Query)).toBeDefined();
  });
});

describe('describing pattern errors of request text', () => {
  it('says which characters are refused instead of printing the XML text pattern', () => {
    const errors = Compile(Type.Object({ batch: XmlText() })).Errors({ batch: 'A\u0000B' }) as SchemaError[];
    expect(describeSchemaErrors(errors, 'body')).toEqual({
      message:
        '`batch` must not contain control characters (other than tab, line feed and carriage return), U+FFFE, U+FFFF or unpaired surrogates.',
      param: 'batch',
    });
  });
});
