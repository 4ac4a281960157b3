import fc from 'fast-check';
import { type TSchema, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { AvailabilityBody } from './routes/availability.js';
import { compileDefaults, requiredOnceFilled } from './schema-defaults.js';
import { AvailabilityItemsSchema } from './schemas/availability.js';
import { HistoryQuerySchema } from './schemas/deliveries.js';
import { OrderQuerySchema, orderBodySchema } from './schemas/orders.js';

const Nested = Type.Object({
  a: Type.Optional(Type.String({ default: 'x' })),
  b: Type.Integer({ default: 3 }),
  c: Type.Object({ d: Type.Boolean({ default: true }), e: Type.String() }, { default: { e: 'y' } }),
  list: Type.Optional(
    Type.Array(
      Type.Object({ id: Type.String(), kind: Type.Optional(Type.Enum(['k1', 'k2'], { default: 'k1' })) }),
    ),
  ),
  union: Type.Optional(
    Type.Union([
      Type.Object({ tag: Type.Literal('u1'), n: Type.Integer({ default: 1 }) }),
      Type.Object({ tag: Type.Literal('u2'), s: Type.String({ default: 's' }) }),
    ]),
  ),
  record: Type.Optional(Type.Record(Type.String(), Type.Object({ r: Type.Integer({ default: 7 }) }))),
  extra: Type.Optional(
    Type.Object(
      { known: Type.String() },
      { additionalProperties: Type.Object({ q: Type.Integer({ default: 9 }) }) },
    ),
  ),
  plain: Type.Optional(Type.Object({ untouched: Type.String() })),
});

const SCHEMAS: [string, TSchema][] = [
  ['POST /v1/availability body', AvailabilityBody],
  ['POST /v1/orders body', orderBodySchema(500)],
  ['POST /v1/orders query', OrderQuerySchema],
  ['GET /v1/deliveries/history query', HistoryQuerySchema],
  ['nested objects, arrays, unions, records, additional properties', Nested],
];

/** Every path to a value inside `value` (objects and arrays), the root included. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (typeof value === 'object' && value !== null)
    for (const [key, child] of Object.entries(value))
      out.push(...paths(child, [...prefix, Array.isArray(value) ? Number(key) : key]));
  return out;
}

type Mutation = { at: number; op: 'delete' | 'replace' | 'add'; with: unknown };

/** A schema-shaped value with some fields deleted or replaced by arbitrary JSON. */
function mutate(base: unknown, mutations: Mutation[]): unknown {
  let value = structuredClone(base);
  for (const m of mutations) {
    const all = paths(value);
    const path = all[m.at % all.length]!;
    if (path.length === 0) {
      if (m.op === 'replace') value = structuredClone(m.with);
      continue;
    }
    let parent = value as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = path.at(-1)!;
    if (m.op === 'add') {
      const target = parent[last];
      if (typeof target === 'object' && target !== null && !Array.isArray(target))
        (target as Record<string, unknown>)[`unknown_${m.at % 3}`] = structuredClone(m.with);
    } else if (m.op === 'delete' && !Array.isArray(parent)) delete parent[last];
    else parent[last] = structuredClone(m.with);
  }
  return value;
}

/** `Value.Create(schema)` when TypeBox can make one (not for patterns without a default). */
function created(schema: TSchema): unknown[] {
  try {
    return [Value.Create(schema)];
  } catch {
    return [];
  }
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('delete', 'replace', 'add'),
  with: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)),
});

/** Values to mutate: the schema's own and examples, and values shaped like the schemas above. */
function basesFor(schema: TSchema): unknown[] {
  return [
    ...created(schema),
    ...((schema as { examples?: unknown[] }).examples ?? []),
    {
      wholesaler: 'w',
      items: [
        { pzn: '1', quantity: 1 },
        { pzn: '2', quantity: 2, demand_type: 'x' },
      ],
    },
    {
      a: 'q',
      c: { e: 'z' },
      list: [{ id: '1' }, { id: '2', kind: 'k2' }],
      union: { tag: 'u2' },
      record: { one: {}, two: { r: 2 } },
      extra: { known: 'k', more: {}, other: { q: 1 } },
      plain: { untouched: 'p' },
    },
  ];
}

describe('compileDefaults', () => {
  for (const [name, schema] of SCHEMAS) {
    it(`fills exactly what Value.Default fills: ${name}`, () => {
      const fill = compileDefaults(schema)!;
      expect(fill).toBeDefined();
      const bases = basesFor(schema);
      fc.assert(
        fc.property(fc.constantFrom(...bases), fc.array(mutation, { maxLength: 4 }), (base, mutations) => {
          const input = mutate(base, mutations);
          const ours = fill(structuredClone(input));
          const reference = Value.Default(schema, structuredClone(input));
          expect(ours).toStrictEqual(reference);
        }),
        { numRuns: 400 },
      );
    });
  }

  it('mutates and returns the value like Value.Default, and clones object defaults', () => {
    const fill = compileDefaults(Nested)!;
    const input: Record<string, unknown> = {};
    expect(fill(input)).toBe(input);
    expect(input).toEqual({ b: 3, c: { d: true, e: 'y' }, a: 'x' });
    const again: Record<string, unknown> = {};
    fill(again);
    expect(again.c).not.toBe(input.c);
  });

  it('is undefined for a schema without defaults', () => {
    expect(compileDefaults(Type.Object({ a: Type.String() }))).toBeUndefined();
  });
});

describe('requiredOnceFilled', () => {
  /** What a check reports, without TypeBox's message texts. */
  const verdict = (check: ReturnType<typeof Compile>, value: unknown) => ({
    valid: check.Check(value),
    errors: [...check.Errors(value)].map(({ keyword, instancePath, schemaPath }) => ({
      keyword,
      instancePath,
      schemaPath,
    })),
  });

  for (const [name, schema] of SCHEMAS) {
    it(`checks a filled value as the schema itself does: ${name}`, () => {
      const fill = compileDefaults(schema)!;
      const plain = Compile(schema);
      const counted = Compile(requiredOnceFilled(schema));
      fc.assert(
        fc.property(
          fc.constantFrom(...basesFor(schema)),
          fc.array(mutation, { maxLength: 4 }),
          (base, mutations) => {
            const filled = fill(mutate(base, mutations));
            expect(verdict(counted, filled)).toEqual(verdict(plain, filled));
          },
        ),
        { numRuns: 400 },
      );
    });
  }

  it('lets an availability item be checked by counting its keys, not by a pattern per key', () => {
    const keyPattern = /getOwnPropertyNames\([^)]*\)\.every/;
    expect(Compile(AvailabilityItemsSchema).Code()).toMatch(keyPattern);
    const code = Compile(requiredOnceFilled(AvailabilityItemsSchema)).Code();
    expect(code).not.toMatch(keyPattern);
    expect(code).toContain('getOwnPropertyNames(');
  });

  it('leaves optional a property whose default is a factory or absent', () => {
    const schema = Type.Object({
      made: Type.Optional(Type.String({ default: () => 'x' })),
      none: Type.Optional(Type.String()),
      given: Type.Optional(Type.String({ default: 'g' })),
    });
    expect((requiredOnceFilled(schema) as { required?: string[] }).required).toEqual(['given']);
    expect(requiredOnceFilled(Type.Object({ a: Type.String() }))).toEqual(Type.Object({ a: Type.String() }));
  });
});
