import { createRequire } from 'node:module';

/**
 * Response serialisation: Fastify's own serializer (fast-json-stringify, "FJS") plus a faster path that
 * gives byte-for-byte the same JSON.
 *
 * FJS decides every `anyOf` branch by running an Ajv validator on the value, which is most of its time
 * on our answers (every nullable field is `anyOf [T, null]`) and allocates an error list whenever the
 * first branch does not match. For the schemas our routes use (objects, arrays, strings, numbers,
 * booleans, string enums, `anyOf [T, null]`), `compileFastSerializer` generates a serializer that checks
 * each value strictly instead: a value it is not certain about (wrong type, a missing required property,
 * an object with `toJSON`, a value an `anyOf` branch would refuse…) makes it hand the whole input to
 * FJS, so any input gives exactly FJS's output, or FJS's error. Schemas with anything else (`$ref`,
 * `default`, `const`, formats, `additionalProperties: true`, …) get FJS itself.
 */

export type Serialize = (data: unknown) => string;

interface RouteSchemaOptions {
  schema?: unknown;
  method: string;
  url: string;
  httpStatus: string;
}

type SerializerCompiler = (options: RouteSchemaOptions) => Serialize;

// Fastify's default serializer factory, resolved from Fastify's own location: the fallback is exactly
// what Fastify would have compiled.
const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const { SerializerSelector } = requireFromFastify('@fastify/fast-json-stringify-compiler') as {
  SerializerSelector: () => (externalSchemas: unknown, serializerOptions: unknown) => SerializerCompiler;
};

/** For `Fastify({ schemaController: { compilersFactory: { buildSerializer } } })`. */
export function buildSerializer(externalSchemas?: unknown, serializerOptions?: unknown): SerializerCompiler {
  const compileFjs = SerializerSelector()(externalSchemas, serializerOptions);
  return (options) => {
    const fjs = compileFjs(options);
    return compileFastSerializer(options.schema, fjs) ?? fjs;
  };
}

/** True when JSON writes `text` as it is between quotes (no control character, quote, backslash or surrogate; a valid surrogate pair answers false too, and JSON.stringify is asked). */
export function isPlain(text: string): boolean {
  const length = text.length;
  if (length >= 64) return !NEEDS_ESCAPE.test(text);
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** The same as `JSON.stringify(text)` for every string (and as FJS's string serializer). */
export function quote(text: string): string {
  const length = text.length;
  if (length < 64) {
    for (let i = 0; i < length; i++) {
      const c = text.charCodeAt(i);
      if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
    }
    return `"${text}"`;
  }
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;

class Unsupported extends Error {}

/** Keywords that do not change what FJS writes (TypeBox's own keys start with `~`). */
const ANNOTATIONS = new Set([
  'description',
  'examples',
  'example',
  'title',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
]);
/** Validation keywords FJS ignores when it serializes, but Ajv checks inside an `anyOf` branch. */
const CONSTRAINTS = new Set([
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
]);
const STRUCTURE = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'anyOf',
]);

type Schema = Record<string, unknown>;

/**
 * A serializer equal to `fallback` (FJS compiled from `schema`) for every input, or undefined when
 * `schema` uses something this compiler does not handle.
 */
export function compileFastSerializer(schema: unknown, fallback: Serialize): Serialize | undefined {
  const functions: string[] = [];
  let root: string;
  try {
    root = compileFunction(schema, false, functions);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  const source = `${functions.join('\n')}\nreturn function serialize(input) {\n  const json = ${root}(input);\n  return json === undefined ? fallback(input) : json;\n};`;
  return new Function('quote', 'isPlain', 'fallback', source)(quote, isPlain, fallback) as Serialize;
}

/**
 * Compiles `schema` into a function `fN(value)` returning its JSON, or undefined when the value is not
 * certainly serialized the way FJS would. `strict`: inside an `anyOf` branch, where the value must also
 * pass Ajv's check of the branch for FJS to pick it.
 */
function compileFunction(schema: unknown, strict: boolean, functions: string[]): string {
  const name = `f${functions.length}`;
  functions.push(''); // reserve the slot
  const body = compileValue(schema, 'value', strict, functions, true);
  functions[Number(name.slice(1))] = `function ${name}(value) {\n  let json = '';\n${body}  return json;\n}`;
  return name;
}

function checkKeywords(schema: Schema, strict: boolean): void {
  for (const key of Object.keys(schema)) {
    if (key.startsWith('~') || ANNOTATIONS.has(key) || STRUCTURE.has(key)) continue;
    if (!strict && CONSTRAINTS.has(key)) continue;
    throw new Unsupported(key);
  }
}

/**
 * Statements appending `prefix` (constant JSON text, e.g. `,"tour":`) and then the JSON of `v` to
 * `json`, or returning undefined. Constant values (null, booleans, enum members) are written together
 * with the prefix as one literal: fewer, larger pieces for V8 to concatenate and later flatten.
 */
function compileValue(
  raw: unknown,
  v: string,
  strict: boolean,
  functions: string[],
  inline = false,
  prefix = '',
): string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Unsupported('schema');
  const schema = raw as Schema;
  checkKeywords(schema, strict);
  const { type } = schema;
  const literal = (json: string) => JSON.stringify(prefix + json);
  const append = (expression: string) =>
    prefix === '' ? `json += ${expression};` : `json += ${JSON.stringify(prefix)} + ${expression};`;

  if (schema.anyOf !== undefined) {
    if (type !== undefined || schema.enum !== undefined || schema.properties !== undefined)
      throw new Unsupported('anyOf with siblings');
    const branches = schema.anyOf;
    if (!Array.isArray(branches) || branches.length !== 2) throw new Unsupported('anyOf');
    const nullAt = branches.findIndex(isNullSchema);
    if (nullAt === -1 || isNullSchema(branches[1 - nullAt])) throw new Unsupported('anyOf without null');
    const other = compileValue(branches[1 - nullAt], v, true, functions, false, prefix);
    return `  if (${v} === null) json += ${literal('null')};\n  else {\n${other}  }\n`;
  }

  if (schema.enum !== undefined) {
    const values = schema.enum;
    if (type !== undefined && type !== 'string') throw new Unsupported('enum type');
    if (!Array.isArray(values) || values.length === 0 || values.some((e) => typeof e !== 'string'))
      throw new Unsupported('enum');
    const cases = [...new Set(values as string[])]
      .map((e) => `    case ${JSON.stringify(e)}: json += ${literal(quote(e))}; break;\n`)
      .join('');
    // Ajv refuses other values in an anyOf branch; FJS writes any string as it is elsewhere.
    const other = strict
      ? '      return undefined;\n'
      : `      if (typeof ${v} !== 'string') return undefined;\n      ${append(`quote(${v})`)}\n`;
    return `  switch (${v}) {\n${cases}    default:\n${other}  }\n`;
  }

  switch (type) {
    case 'string':
      return `  if (typeof ${v} !== 'string') return undefined;\n  if (isPlain(${v})) json += ${JSON.stringify(`${prefix}"`)} + ${v} + '"';\n  else ${append(`JSON.stringify(${v})`)}\n`;
    case 'integer':
      return `  if (!Number.isInteger(${v})) return undefined;\n  ${append(`('' + ${v})`)}\n`;
    case 'number':
      return `  if (typeof ${v} !== 'number' || !Number.isFinite(${v})) return undefined;\n  ${append(`('' + ${v})`)}\n`;
    case 'boolean':
      return `  if (${v} === true) json += ${literal('true')};\n  else if (${v} === false) json += ${literal('false')};\n  else return undefined;\n`;
    case 'null':
      return `  if (${v} !== null) return undefined;\n  json += ${literal('null')};\n`;
    case 'array':
    case 'object': {
      if (inline) {
        if (prefix !== '') throw new Error('an inline object or array takes no prefix');
        return type === 'array'
          ? compileArray(schema, v, strict, functions)
          : compileObject(schema, v, strict, functions);
      }
      const name = compileFunction(schema, strict, functions);
      const open = prefix === '' ? '' : `  json += ${JSON.stringify(prefix)};\n`;
      return `  const ${v}Json = ${name}(${v});\n  if (${v}Json === undefined) return undefined;\n${open}  json += ${v}Json;\n`;
    }
    default:
      throw new Unsupported(`type ${String(type)}`);
  }
}

function isNullSchema(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const keys = Object.keys(schema).filter((key) => !key.startsWith('~') && !ANNOTATIONS.has(key));
  return keys.length === 1 && (schema as Schema).type === 'null';
}

function compileArray(schema: Schema, v: string, strict: boolean, functions: string[]): string {
  const items = schema.items;
  if (typeof items !== 'object' || items === null || Array.isArray(items)) throw new Unsupported('items');
  const item = compileFunction(items, strict, functions);
  return [
    `  if (!Array.isArray(${v})) return undefined;`,
    `  json += '[';`,
    `  for (let i = 0; i < ${v}.length; i++) {`,
    `    const item = ${item}(${v}[i]);`,
    '    if (item === undefined) return undefined;',
    `    json += i === 0 ? item : ',' + item;`,
    '  }',
    `  json += ']';`,
    '',
  ].join('\n');
}

function compileObject(schema: Schema, v: string, strict: boolean, functions: string[]): string {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties))
    throw new Unsupported('properties');
  const required = (schema.required ?? []) as unknown[];
  if (!Array.isArray(required) || required.some((key) => typeof key !== 'string' || !(key in properties)))
    throw new Unsupported('required');
  const additional = schema.additionalProperties;
  if (additional !== undefined && additional !== false) throw new Unsupported('additionalProperties');
  // FJS's order: the properties in schema order, required ones first (a stable sort).
  const keys = Object.keys(properties).sort((a, b) => {
    const ra = required.includes(a);
    const rb = required.includes(b);
    return ra === rb ? 0 : ra ? -1 : 1;
  });

  const lines = [
    // FJS calls toJSON; Ajv (in an anyOf branch) checks the object itself: neither is followed here.
    `  if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v}) || typeof ${v}.toJSON === 'function') return undefined;`,
  ];
  if (strict && additional === false) {
    const known = keys.map((key) => `key === ${JSON.stringify(key)}`).join(' || ') || 'false';
    lines.push(`  for (const key in ${v}) if (!(${known})) return undefined;`);
  }
  // Required properties come first: once the first is written, every later one follows a comma.
  const firstRequired = keys.length > 0 && required.includes(keys[0]);
  if (!firstRequired) lines.push(`  let comma = false;`, `  json += '{';`);
  keys.forEach((key, i) => {
    const p = `p${i}`;
    const isRequired = required.includes(key);
    const name = `${JSON.stringify(key)}:`;
    lines.push(`  const ${p} = ${v}[${JSON.stringify(key)}];`);
    lines.push(`  if (${p} !== undefined) {`);
    let prefix = '';
    if (!firstRequired)
      lines.push(
        `    json += comma ? ${JSON.stringify(`,${name}`)} : ${JSON.stringify(name)};`,
        '    comma = true;',
      );
    else prefix = i === 0 ? `{${name}` : `,${name}`;
    lines.push(indent(compileValue(properties[key], p, strict, functions, false, prefix)));
    lines.push(isRequired ? '  } else return undefined;' : '  }');
  });
  lines.push(`  json += '}';`, '');
  return lines.join('\n');
}

function indent(code: string): string {
  return code
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}
