import { createRequire } from 'node:module';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fc from 'fast-check';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { ROUTES } from '../app.js';
import type { AppDeps } from './app-deps.js';
import { ErrorBodySchema } from './schemas/error.js';
import { compileFastSerializer, isPlain, quote, type Serialize } from './serializer.js';
import type { GatewayApp } from './types.js';

const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const { SerializerSelector } = requireFromFastify('@fastify/fast-json-stringify-compiler') as {
  SerializerSelector: () => (
    externalSchemas: unknown,
    options: unknown,
  ) => (route: { schema: unknown; method: string; url: string; httpStatus: string }) => Serialize;
};

interface ResponseSchema {
  route: string;
  status: string;
  schema: unknown;
}

/** Every response schema of every route, as Fastify compiles them. */
function collectResponseSchemas(deps: AppDeps): ResponseSchema[] {
  const out: ResponseSchema[] = [];
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>() as unknown as GatewayApp;
  app.addHook('onRoute', (route) => {
    const responses = (route.schema?.response ?? {}) as Record<string, unknown>;
    for (const [status, schema] of Object.entries(responses)) {
      out.push({ route: `${route.method} ${route.url}`, status, schema });
    }
  });
  for (const register of ROUTES) register(app, deps);
  return out;
}

// A small deterministic PRNG, so a failing case can be replayed from its seed.
function random(seed: number): () => number {
  let state = Math.imul(seed, 0x9e3779b1) >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let i = 0; i < 8; i++) next(); // small seeds start with small numbers otherwise
  return next;
}

const STRINGS = [
  '',
  'Mittagstour',
  '04114918',
  'quote " and backslash \\',
  'line\nbreak\ttab\u0000',
  'Apotheke Süd – €',
  'emoji 😀',
  'lone \ud800 surrogate',
  'x'.repeat(70),
  `${'y'.repeat(70)}"`,
];

/** Values that do not fit (or only loosely fit) a schema. */
function junk(next: () => number): unknown {
  const options: (() => unknown)[] = [
    () => undefined,
    () => null,
    () => 0,
    () => -0,
    () => 1.5,
    () => Number.NaN,
    () => Number.POSITIVE_INFINITY,
    () => '12',
    () => STRINGS[Math.floor(next() * STRINGS.length)],
    () => true,
    () => ({}),
    () => [],
    () => new Date(0),
    () => ({ toJSON: () => 'from toJSON' }),
    () => Object.create(null),
    () => 10n,
  ];
  return options[Math.floor(next() * options.length)]!();
}

/**
 * A value for `schema`. `mutation.at`: the node (counted in generation order) that is spoiled: replaced by
 * junk, or for an object given an extra key or lacking one, for an enum given another string. One spoiled
 * node per value, so the rest of the value cannot hide what the serializers make of it.
 */
function valueFor(
  raw: unknown,
  next: () => number,
  mutation: { at: number; seen: number },
  depth = 0,
): unknown {
  const spoil = mutation.seen++ === mutation.at;
  const schema = raw as Record<string, unknown>;
  if (spoil && next() < 0.4) return junk(next);
  if (Array.isArray(schema.anyOf)) {
    mutation.seen--; // the branch is the same node
    const branches = schema.anyOf as unknown[];
    return valueFor(branches[Math.floor(next() * branches.length)], next, mutation, depth);
  }
  if (Array.isArray(schema.enum)) {
    const values = schema.enum as unknown[];
    return spoil ? 'not_in_enum' : values[Math.floor(next() * values.length)];
  }
  if (schema.const !== undefined) return spoil ? junk(next) : schema.const;
  switch (schema.type) {
    case 'string':
      return STRINGS[Math.floor(next() * STRINGS.length)];
    case 'integer':
      return spoil ? 2.5 : Math.floor(next() * 2_000) - 1_000;
    case 'number':
      return spoil ? Number.NaN : next() * 1_000 - 500;
    case 'boolean':
      return spoil ? 1 : next() < 0.5;
    case 'null':
      return spoil ? junk(next) : null;
    case 'array': {
      const length = depth > 4 ? 0 : Math.floor(next() * 4);
      const items = Array.from({ length }, () => valueFor(schema.items, next, mutation, depth + 1));
      if (spoil) items.length += 1; // a hole
      return items;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = Object.entries((schema.properties ?? {}) as Record<string, unknown>);
      const required = (schema.required ?? []) as string[];
      const drop = spoil && next() < 0.5 ? Math.floor(next() * properties.length) : -1;
      properties.forEach(([key, property], i) => {
        if (i !== drop && (required.includes(key) || next() < 0.7))
          out[key] = valueFor(property, next, mutation, depth + 1);
      });
      if (spoil && drop === -1) {
        if (next() < 0.5) out.extra_key = 'extra';
        else out.toJSON = () => ({ replaced: true });
      }
      if (next() < 0.3) return Object.fromEntries(Object.entries(out).reverse());
      return out;
    }
    default:
      return junk(next);
  }
}

function outcome(serialize: Serialize, value: unknown): { json: string } | { error: string } {
  try {
    return { json: serialize(value) };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

/** Shapes the routes do not have (yet), for the corners of the generated code. */
const SHAPES: ResponseSchema[] = [
  {
    route: 'shape: items with one required property',
    status: '200',
    schema: {
      type: 'array',
      items: { type: 'object', properties: { a: { type: 'boolean' } }, required: ['a'] },
    },
  },
  {
    route: 'shape: nested arrays, optional and empty objects',
    status: '200',
    schema: {
      type: 'object',
      properties: {
        grid: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
        empty: { type: 'object', properties: {} },
        loose: {
          type: 'array',
          items: {
            type: 'object',
            properties: { x: { type: 'integer' }, y: { enum: ['p', 'q'] }, z: { type: 'number' } },
          },
        },
        nullable: {
          type: 'array',
          items: {
            anyOf: [
              { type: 'null' },
              {
                type: 'object',
                properties: {
                  k: { enum: ['a', 'b'] },
                  n: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
                },
                required: ['k', 'n'],
                additionalProperties: false,
              },
            ],
          },
        },
      },
      required: ['grid', 'loose'],
    },
  },
];

describe('response serializer', () => {
  let database: TestDatabase;
  let schemas: ResponseSchema[];
  const compileFjs = SerializerSelector()(
    { [(ErrorBodySchema as { $id?: string }).$id as string]: ErrorBodySchema },
    {},
  );

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    const { app, deps } = await buildTestApp(database);
    await app.close();
    schemas = [...collectResponseSchemas(deps), ...SHAPES];
  });
  afterAll(async () => {
    await database.dispose();
  });

  it('quotes every string exactly as JSON.stringify does', () => {
    const codeUnits = fc
      .oneof(
        fc.integer({ min: 0, max: 0x7f }),
        fc.integer({ min: 0xd7f0, max: 0xe010 }),
        fc.integer({ min: 0, max: 0xffff }),
      )
      .map((c) => String.fromCharCode(c));
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: codeUnits, maxLength: 100 }),
      fc.constantFrom(...STRINGS),
    );
    fc.assert(
      fc.property(text, (written) => {
        // The text as it is, and as a slice of a longer string (what V8 makes of a long substring).
        for (const value of [written, `${'x'.repeat(20)}${written}`.slice(20)]) {
          expect(quote(value)).toBe(JSON.stringify(value));
          // isPlain may say no to a string JSON leaves alone (a valid surrogate pair), never the reverse.
          if (isPlain(value)) expect(JSON.stringify(value)).toBe(`"${value}"`);
          else expect(value).toMatch(/[\u0000-\u001f"\\\ud800-\udfff]/);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the fast path for the availability answer and the other plain answers', () => {
    const supported = schemas
      .filter(({ schema }) => compileFastSerializer(schema, () => '') !== undefined)
      .map(({ route, status }) => `${route} ${status}`);
    expect(supported).toContain('POST /v1/availability 200');
    expect(supported.length).toBeGreaterThan(10);
  });

  it('writes what fast-json-stringify writes, or fails as it fails, for any value of every route schema', () => {
    for (const { route, status, schema } of schemas) {
      const fjs = compileFjs({ schema, method: 'GET', url: route, httpStatus: status });
      let fallbacks = 0;
      const fast = compileFastSerializer(schema, (value) => {
        fallbacks += 1;
        return fjs(value);
      });
      if (fast === undefined) continue;
      for (let seed = 1; seed <= 1500; seed++) {
        // Every fifth value fits the schema; the others have one spoiled node, any of them.
        const spoilt = seed % 5 !== 0;
        const count = { at: -1, seen: 0 };
        valueFor(schema, random(seed), count);
        const at = spoilt ? Math.floor(random(seed * 7919)() * count.seen) : -1;
        const value = valueFor(schema, random(seed), { at, seen: 0 });
        const before = fallbacks;
        expect(outcome(fast, value), `${route} ${status} seed ${seed}`).toEqual(outcome(fjs, value));
        // A value made to fit the schema never needs fast-json-stringify.
        if (!spoilt) expect(fallbacks, `${route} ${status} seed ${seed} fell back`).toBe(before);
      }
    }
  });
});
