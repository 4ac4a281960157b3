import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { nulInValues } from './nul-characters.js';
import { compileDefaults, requiredOnceFilled } from './schema-defaults.js';
import { nulError, type SchemaError } from './validation-messages.js';

export {
  describeSchemaErrors,
  pointerToPath,
  type RequestPart,
  type SchemaError,
} from './validation-messages.js';

/**
 * Route schemas are checked by TypeBox's compiled validators. Bodies are taken as sent (a string is
 * never turned into a number); query, path and header values are text and are converted first, numbers
 * only from plain decimal text (see `numberTextCheck`). `default`s in a schema are filled in.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const fillDefaults = compileDefaults(schema); // Value.Default, specialised to this schema
  // Values are checked after filling, so what the filler always writes counts as required.
  const check = Compile(fillDefaults === undefined ? schema : requiredOnceFilled(schema));
  const convert = httpPart !== 'body';
  const alreadyConverted = convert ? stringsOnlyCheck(schema) : undefined;
  const numberText = convert ? numberTextCheck(schema) : undefined;
  return (input: unknown) => {
    const nul = convert ? nulInValues(input) : undefined;
    if (nul !== undefined) return { error: [nulError(nul)] as never };
    const notNumbers = numberText?.(input);
    if (notNumbers !== undefined) return { error: notNumbers as never };
    let value = convert && alreadyConverted?.(input) !== true ? Value.Convert(schema, input) : input;
    if (fillDefaults !== undefined) value = fillDefaults(value);
    if (!check.Check(value))
      return { error: withKnownProperties(schema, check.Errors(value) as Iterable<SchemaError>) as never };
    return value === input ? UNCHANGED : { value };
  };
};

/**
 * The answer for a value that passed as the request part it came in (defaults, if any, filled in place):
 * with no `value` in it, Fastify keeps the part it has. Handing headers back, even the same object,
 * would make every later `request.headers` a fresh merged copy (Fastify's getter), and the availability
 * route reads them several times per request (docs/performance.md "Smaller steps").
 */
const UNCHANGED = Object.freeze({});

/**
 * For an object schema whose properties are all plain strings (the header schemas), a test for inputs
 * `Value.Convert` would leave as they are: an object with a string, or nothing, under each of those
 * names (Convert turns only non-strings into strings, and only under the schema's names, which it
 * matches as `^name$` patterns: hence names without pattern characters). Undefined for other schemas.
 */
export function stringsOnlyCheck(schema: TSchema): ((input: unknown) => boolean) | undefined {
  const { type, properties, additionalProperties } = schema as {
    type?: unknown;
    properties?: Record<string, Record<string, unknown>>;
    additionalProperties?: unknown;
  };
  if (type !== 'object' || typeof properties !== 'object' || properties === null) return undefined;
  if (typeof additionalProperties === 'object' && additionalProperties !== null) return undefined;
  const names = Object.keys(properties);
  for (const name of names) {
    const property = properties[name]!;
    if (!/^[A-Za-z0-9_-]+$/.test(name) || property.type !== 'string') return undefined;
    if (property.anyOf !== undefined || property.enum !== undefined || property.const !== undefined)
      return undefined;
  }
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
    for (const name of names) {
      const value = (input as Record<string, unknown>)[name];
      if (value !== undefined && typeof value !== 'string') return false;
    }
    return true;
  };
}

const NUMBER_TEXT = {
  integer: /^-?[0-9]+$/,
  number: /^-?[0-9]+(?:\.[0-9]+)?$/,
} as const;

/**
 * For an object schema (query, path, headers) with integer or number properties, a test that each of
 * them, when given as text, is plain decimal: `Value.Convert` takes anything `Number()` reads and
 * truncates it (`1.5` → 1, `0x10` → 16, `0b11` → 3, ` 10` → 10, `1e1` → 10, `true` → 1, `` → 0), so
 * those would pass as integers. Returns the errors (a `type` error per such property, as the validator
 * reports a wrong type), or undefined when all is well; undefined instead of a test when the schema has
 * no such properties. Values that are not strings (repeated parameters) are left to the schema.
 */
export function numberTextCheck(
  schema: TSchema,
): ((input: unknown) => SchemaError[] | undefined) | undefined {
  const { type, properties } = schema as { type?: unknown; properties?: Record<string, { type?: unknown }> };
  if (type !== 'object' || typeof properties !== 'object' || properties === null) return undefined;
  const numeric = Object.entries(properties).flatMap(([name, property]) =>
    property.type === 'integer' || property.type === 'number'
      ? [{ name, type: property.type, text: NUMBER_TEXT[property.type] }]
      : [],
  );
  if (numeric.length === 0) return undefined;
  return (input) => {
    if (typeof input !== 'object' || input === null) return undefined;
    const errors: SchemaError[] = [];
    for (const { name, type, text } of numeric) {
      const value = (input as Record<string, unknown>)[name];
      if (typeof value !== 'string' || text.test(value)) continue;
      errors.push({
        keyword: 'type',
        instancePath: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        schemaPath: `#/properties/${name}/type`,
        params: { type },
        message: `must be ${type === 'integer' ? 'a whole number' : 'a number'} written in decimal digits`,
      });
    }
    return errors.length > 0 ? errors : undefined;
  };
}

/**
 * An unknown field's error names the fields its object knows (`params.knownProperties`), found through
 * the error's `schemaPath` (the object schema), so the message can suggest the one meant.
 */
function withKnownProperties(schema: TSchema, errors: Iterable<SchemaError>): SchemaError[] {
  return [...errors].map((error) => {
    if (error.keyword !== 'additionalProperties') return error;
    const object = schemaAt(schema, error.schemaPath) as { properties?: Record<string, unknown> } | undefined;
    const known = object?.properties === undefined ? [] : Object.keys(object.properties);
    return { ...error, params: { ...error.params, knownProperties: known } };
  });
}

function schemaAt(schema: unknown, pointer: string): unknown {
  let node = schema;
  for (const raw of pointer.replace(/^#/, '').split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}
