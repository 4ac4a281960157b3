import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { compileDefaults } from './schema-defaults.js';
import { describePattern } from './schemas/strings.js';

/**
 * Route schemas are checked by TypeBox's compiled validators. Bodies are taken as sent (a string is
 * never turned into a number); query, path and header values are text and are converted first, numbers
 * only from plain decimal text (see `numberTextCheck`). `default`s in a schema are filled in.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  const convert = httpPart !== 'body';
  const alreadyConverted = convert ? stringsOnlyCheck(schema) : undefined;
  const numberText = convert ? numberTextCheck(schema) : undefined;
  const fillDefaults = compileDefaults(schema); // Value.Default, specialised to this schema
  return (input: unknown) => {
    const notNumbers = numberText?.(input);
    if (notNumbers !== undefined) return { error: notNumbers as never };
    let value = convert && alreadyConverted?.(input) !== true ? Value.Convert(schema, input) : input;
    if (fillDefaults !== undefined) value = fillDefaults(value);
    return check.Check(value) ? { value } : { error: check.Errors(value) as never };
  };
};

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
        message: `must be ${type === 'integer' ? 'a decimal integer' : 'a decimal number'}`,
      });
    }
    return errors.length > 0 ? errors : undefined;
  };
}

/** One validation error as TypeBox (and Ajv) report it. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

const PART_LABEL: Record<RequestPart, string> = {
  body: '',
  querystring: 'query parameter ',
  params: 'path parameter ',
  headers: 'header ',
};

/** Turns a validator's error list into one message naming the field (`items[3].pzn must match …`) and its `param`. */
export function describeSchemaErrors(
  errors: readonly SchemaError[],
  part: RequestPart,
): { message: string; param?: string } {
  const branchDetails = errors.filter((e) => e.schemaPath.includes('/anyOf/'));
  const main = errors.filter((e) => !e.schemaPath.includes('/anyOf/'));
  const error = main.find((e) => e.keyword !== 'boolean') ?? main[0] ?? errors[0];
  if (error === undefined) return { message: 'The request is invalid.' };

  let path = pointerToPath(error.instancePath);
  let problem: string;
  switch (error.keyword) {
    case 'required': {
      const missing = (error.params.requiredProperties as string[] | undefined)?.[0] ?? '?';
      path = joinPath(path, missing);
      problem = 'is required';
      break;
    }
    case 'additionalProperties': {
      const extra = (error.params.additionalProperties as string[] | undefined)?.[0] ?? '?';
      path = joinPath(path, extra);
      problem = 'is not a known field';
      break;
    }
    case 'boolean':
      problem = 'is not a known field';
      break;
    case 'anyOf': {
      const constants = branchDetails
        .filter((e) => e.instancePath === error.instancePath && e.keyword === 'const')
        .map((e) => JSON.stringify(e.params.allowedValue));
      problem =
        constants.length > 0 ? `must be one of ${constants.join(', ')}` : 'does not match any allowed form';
      break;
    }
    default:
      problem = describeKeyword(error);
  }
  if (path === '') {
    return { message: part === 'body' ? `The request body ${problem}` : `The ${partName(part)} ${problem}` };
  }
  return { message: `${PART_LABEL[part]}${path} ${problem}`, param: path };
}

function describeKeyword({ keyword, params, message }: SchemaError): string {
  switch (keyword) {
    case 'type':
      return `must be ${article(String(params.type))}`;
    case 'pattern':
      return describePattern(String(params.pattern)) ?? `must match ${String(params.pattern)}`;
    case 'format':
      return `must be a valid ${String(params.format)}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'minLength':
      return `must be at least ${params.limit} characters long`;
    case 'maxLength':
      return `must be at most ${params.limit} characters long`;
    case 'minItems':
      return `must have at least ${params.limit} items`;
    case 'maxItems':
      return `must have at most ${params.limit} items`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${params.comparison} ${params.limit}`;
    default:
      return message ?? `breaks the ${keyword} rule`;
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function partName(part: RequestPart): string {
  return { body: 'request body', querystring: 'query string', params: 'path', headers: 'headers' }[part];
}

/** `/items/3/pzn` → `items[3].pzn` */
export function pointerToPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path = /^\d+$/.test(segment) ? `${path}[${segment}]` : joinPath(path, segment);
  }
  return path;
}

function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
