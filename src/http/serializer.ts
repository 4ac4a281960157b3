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
  if (length >= SLICE_LENGTH) return !NEEDS_ESCAPE.test(text);
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** The same as `JSON.stringify(text)` for every string (and as FJS's string serializer). */
export function quote(text: string): string {
  return isPlain(text) ? `"${text}"` : JSON.stringify(text);
}

const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;
/**
 * From this length on, V8 makes a substring a slice of its parent string, and an answer's strings are
 * mostly such slices of the wholesaler's document (a delivery time, a tour). A character loop reaches
 * each character of a slice through it; the regular expression reads the parent directly. Inside the
 * gateway the expression was cheaper from here on (docs/performance.md "Smaller steps").
 */
const SLICE_LENGTH = 13;

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
 * Constant JSON text written before a value: `plain`, or `afterComma` when the generated function's
 * `lead` argument is true (an array item after the first one).
 */
interface Affix {
  plain: string;
  afterComma?: string;
}

const NO_AFFIX: Affix = { plain: '' };

/** A JS expression for the constant text `affix` + `json` + `suffix`. */
function literal(affix: Affix, json: string, suffix = ''): string {
  const plain = JSON.stringify(affix.plain + json + suffix);
  if (affix.afterComma === undefined) return plain;
  return `(lead ? ${JSON.stringify(affix.afterComma + json + suffix)} : ${plain})`;
}

/** A JS expression for `affix` + `expression` + `suffix`, without empty pieces. */
function around(affix: Affix, expression: string, suffix = ''): string {
  const parts = [];
  if (affix.afterComma !== undefined || affix.plain !== '') parts.push(literal(affix, ''));
  parts.push(expression);
  if (suffix !== '') parts.push(JSON.stringify(suffix));
  return parts.join(' + ');
}

/**
 * A serializer equal to `fallback` (FJS compiled from `schema`) for every input, or undefined when
 * `schema` uses something this compiler does not handle.
 */
export function compileFastSerializer(schema: unknown, fallback: Serialize): Serialize | undefined {
  const functions: string[] = [];
  let root: string;
  try {
    root = compileFunction(schema, false, functions, NO_AFFIX, '');
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  const source = `${functions.join('\n')}\nreturn function serialize(input) {\n  const json = ${root}(input, false);\n  return json === undefined ? fallback(input) : json;\n};`;
  return new Function('quote', 'isPlain', 'fallback', source)(quote, isPlain, fallback) as Serialize;
}

/**
 * Compiles `schema` into a function `fN(value, lead)` returning `affix` + the value's JSON + `suffix`,
 * or undefined when the value is not certainly serialized the way FJS would. Every generated function
 * has one caller, so the text around the value is known here and written with the value's own
 * constant pieces. `strict`: inside an `anyOf` branch, where the value must also pass Ajv's check of
 * the branch for FJS to pick it.
 */
function compileFunction(
  schema: unknown,
  strict: boolean,
  functions: string[],
  affix: Affix,
  suffix: string,
): string {
  const name = `f${functions.length}`;
  functions.push(''); // reserve the slot
  const { type } = schema as Schema;
  const body =
    type === 'object' && (schema as Schema).anyOf === undefined && (schema as Schema).enum === undefined
      ? compileObject(checked(schema, strict), 'value', strict, functions, affix, suffix)
      : type === 'array' && (schema as Schema).anyOf === undefined && (schema as Schema).enum === undefined
        ? compileArray(checked(schema, strict), 'value', strict, functions, affix, suffix)
        : compileValue(schema, 'value', strict, functions, affix, suffix);
  functions[Number(name.slice(1))] =
    `function ${name}(value, lead) {\n  let json = '';\n${body}  return json;\n}`;
  return name;
}

function checked(raw: unknown, strict: boolean): Schema {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Unsupported('schema');
  const schema = raw as Schema;
  for (const key of Object.keys(schema)) {
    if (key.startsWith('~') || ANNOTATIONS.has(key) || STRUCTURE.has(key)) continue;
    if (!strict && CONSTRAINTS.has(key)) continue;
    throw new Unsupported(key);
  }
  return schema;
}

/**
 * Statements appending `affix`, the JSON of `v` and `suffix` to `json`, or returning undefined.
 * Constant values (null, booleans, enum members) are written together with the text around them as
 * one literal: fewer, larger pieces for V8 to concatenate and later flatten.
 */
function compileValue(
  raw: unknown,
  v: string,
  strict: boolean,
  functions: string[],
  affix: Affix,
  suffix: string,
): string {
  const schema = checked(raw, strict);
  const { type } = schema;

  if (schema.anyOf !== undefined) {
    if (type !== undefined || schema.enum !== undefined || schema.properties !== undefined)
      throw new Unsupported('anyOf with siblings');
    const branches = schema.anyOf;
    if (!Array.isArray(branches) || branches.length !== 2) throw new Unsupported('anyOf');
    const nullAt = branches.findIndex(isNullSchema);
    if (nullAt === -1 || isNullSchema(branches[1 - nullAt])) throw new Unsupported('anyOf without null');
    const other = compileValue(branches[1 - nullAt], v, true, functions, affix, suffix);
    return `  if (${v} === null) json += ${literal(affix, 'null', suffix)};\n  else {\n${other}  }\n`;
  }

  if (schema.enum !== undefined) {
    const values = schema.enum;
    if (type !== undefined && type !== 'string') throw new Unsupported('enum type');
    if (!Array.isArray(values) || values.length === 0 || values.some((e) => typeof e !== 'string'))
      throw new Unsupported('enum');
    const cases = [...new Set(values as string[])]
      .map((e) => `    case ${JSON.stringify(e)}: json += ${literal(affix, quote(e), suffix)}; break;\n`)
      .join('');
    // Ajv refuses other values in an anyOf branch; FJS writes any string as it is elsewhere.
    const other = strict
      ? '      return undefined;\n'
      : `      if (typeof ${v} !== 'string') return undefined;\n      json += ${around(affix, `quote(${v})`, suffix)};\n`;
    return `  switch (${v}) {\n${cases}    default:\n${other}  }\n`;
  }

  switch (type) {
    case 'string': {
      const open = literal(
        { plain: `${affix.plain}"`, afterComma: affix.afterComma && `${affix.afterComma}"` },
        '',
      );
      return [
        `  if (typeof ${v} !== 'string') return undefined;`,
        `  if (isPlain(${v})) json += ${open} + ${v} + ${JSON.stringify(`"${suffix}`)};`,
        `  else json += ${around(affix, `JSON.stringify(${v})`, suffix)};`,
        '',
      ].join('\n');
    }
    case 'integer':
      return `  if (!Number.isInteger(${v})) return undefined;\n  json += ${around(affix, `('' + ${v})`, suffix)};\n`;
    case 'number':
      return `  if (typeof ${v} !== 'number' || !Number.isFinite(${v})) return undefined;\n  json += ${around(affix, `('' + ${v})`, suffix)};\n`;
    case 'boolean':
      return `  if (${v} === true) json += ${literal(affix, 'true', suffix)};\n  else if (${v} === false) json += ${literal(affix, 'false', suffix)};\n  else return undefined;\n`;
    case 'null':
      return `  if (${v} !== null) return undefined;\n  json += ${literal(affix, 'null', suffix)};\n`;
    case 'array':
    case 'object': {
      const name = compileFunction(schema, strict, functions, affix, suffix);
      const lead = affix.afterComma === undefined ? 'false' : 'lead';
      return `  const ${v}Json = ${name}(${v}, ${lead});\n  if (${v}Json === undefined) return undefined;\n  json += ${v}Json;\n`;
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

function compileArray(
  schema: Schema,
  v: string,
  strict: boolean,
  functions: string[],
  affix: Affix,
  suffix: string,
): string {
  const items = schema.items;
  if (typeof items !== 'object' || items === null || Array.isArray(items)) throw new Unsupported('items');
  // Items after the first one start with the comma.
  const item = compileFunction(items, strict, functions, { plain: '', afterComma: ',' }, '');
  return [
    `  if (!Array.isArray(${v})) return undefined;`,
    `  json += ${literal(affix, '[')};`,
    `  for (let i = 0; i < ${v}.length; i++) {`,
    `    const item = ${item}(${v}[i], i > 0);`,
    '    if (item === undefined) return undefined;',
    '    json += item;',
    '  }',
    `  json += ${JSON.stringify(`]${suffix}`)};`,
    '',
  ].join('\n');
}

function compileObject(
  schema: Schema,
  v: string,
  strict: boolean,
  functions: string[],
  affix: Affix,
  suffix: string,
): string {
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
  if (keys.length === 0) {
    lines.push(`  json += ${literal(affix, '{}', suffix)};`, '');
    return lines.join('\n');
  }
  // Required properties come first: once the first is written, every later one follows a comma. The
  // object's opening text goes with the first property and, if the last is required, its close with it.
  const firstRequired = required.includes(keys[0]);
  const lastRequired = firstRequired && required.includes(keys[keys.length - 1]);
  if (!firstRequired) lines.push(`  let comma = false;`, `  json += ${literal(affix, '{')};`);
  keys.forEach((key, i) => {
    const p = `p${i}`;
    const isRequired = required.includes(key);
    const name = `${JSON.stringify(key)}:`;
    lines.push(`  const ${p} = ${v}[${JSON.stringify(key)}];`);
    lines.push(`  if (${p} !== undefined) {`);
    let propertyAffix = NO_AFFIX;
    if (!firstRequired)
      lines.push(
        `    json += comma ? ${JSON.stringify(`,${name}`)} : ${JSON.stringify(name)};`,
        '    comma = true;',
      );
    else if (i === 0)
      propertyAffix = {
        plain: `${affix.plain}{${name}`,
        ...(affix.afterComma === undefined ? {} : { afterComma: `${affix.afterComma}{${name}` }),
      };
    else propertyAffix = { plain: `,${name}` };
    const propertySuffix = lastRequired && i === keys.length - 1 ? `}${suffix}` : '';
    lines.push(indent(compileValue(properties[key], p, strict, functions, propertyAffix, propertySuffix)));
    lines.push(isRequired ? '  } else return undefined;' : '  }');
  });
  if (!lastRequired) lines.push(`  json += ${JSON.stringify(`}${suffix}`)};`);
  lines.push('');
  return lines.join('\n');
}

function indent(code: string): string {
  return code
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}
