import { closestName } from '../lib/did-you-mean.js';
import { describePattern } from './schemas/pattern-problems.js';

/**
 * Validation errors in words a pharmacy developer understands (docs/errors.md): one sentence naming the
 * field (`` `items[3].pzn` must be 1 to 8 digits, e.g. 04114918. ``), never a regular expression or a
 * JSON Schema keyword. The `param` is the field path as before.
 */

/** One validation error as TypeBox (and Ajv) report it. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

/** The validators' own keyword for a NUL character in a value (src/http/nul-characters.ts). */
const NUL_KEYWORD = 'x-nul';

/** The error for a NUL character in the value at `pointer`, worded like the schema errors. */
export function nulError(pointer: string): SchemaError {
  return { keyword: NUL_KEYWORD, instancePath: pointer, schemaPath: '#', params: {} };
}

const PART_LABEL: Record<RequestPart, string> = {
  body: '',
  querystring: 'Query parameter ',
  params: 'Path parameter ',
  headers: 'Header ',
};

const PART_NAME: Record<RequestPart, string> = {
  body: 'The request body',
  querystring: 'The query string',
  params: 'The path',
  headers: 'The headers',
};

/** Field names and values are shown at most this long, so a client's junk cannot swell a message. */
const SHOWN_MAX = 60;
/** At most this many allowed values are listed. */
const LISTED_MAX = 12;

/** Turns a validator's error list into one sentence naming the field, and the field as `param`. */
export function describeSchemaErrors(
  errors: readonly SchemaError[],
  part: RequestPart,
): { message: string; param?: string } {
  const branchDetails = errors.filter((e) => e.schemaPath.includes('/anyOf/'));
  const main = errors.filter((e) => !e.schemaPath.includes('/anyOf/'));
  const error = pickError(main) ?? errors[0];
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
      problem = unknownField(extra, error.params.knownProperties);
      break;
    }
    case 'boolean':
      problem = 'is not a known field';
      break;
    case 'anyOf': {
      const here = branchDetails.filter((e) => e.instancePath === error.instancePath);
      const deeper = branchDetails.filter((e) => e.instancePath.startsWith(`${error.instancePath}/`));
      // A value of the right shape with a wrong part: that part is the news (`target.id must be …`).
      if (deeper.length > 0 && !here.some((e) => e.keyword === 'const' || e.keyword === 'enum')) {
        return describeSchemaErrors(
          deeper.map((e) => ({ ...e, schemaPath: e.schemaPath.replace(/\/anyOf\/\d+/g, '') })),
          part,
        );
      }
      problem = describeAlternatives(here);
      break;
    }
    default:
      problem = describeKeyword(error);
  }
  const end = problem.endsWith('?') ? '' : '.';
  if (path === '') return { message: `${PART_NAME[part]} ${problem}${end}` };
  return { message: `${PART_LABEL[part]}${shownName(path)} ${problem}${end}`, param: path };
}

/**
 * The error to report: the first one, except that a missing field is reported as the unknown field
 * next to it that looks like its misspelling (`quantitty` for `quantity`).
 */
function pickError(errors: readonly SchemaError[]): SchemaError | undefined {
  const first = errors.find((e) => e.keyword !== 'boolean') ?? errors[0];
  if (first?.keyword !== 'required') return first;
  const missing = (first.params.requiredProperties as string[] | undefined) ?? [];
  const misspelt = errors.find(
    (e) =>
      e.keyword === 'additionalProperties' &&
      e.instancePath === first.instancePath &&
      ((e.params.additionalProperties as string[] | undefined) ?? []).some((extra) =>
        missing.includes(closestName(extra, missing) ?? ''),
      ),
  );
  return misspelt ?? first;
}

function unknownField(name: string, known: unknown): string {
  const names = Array.isArray(known) ? known.filter((k): k is string => typeof k === 'string') : [];
  const suggestion = closestName(name, names);
  return suggestion === undefined
    ? 'is not a known field'
    : `is not a known field; did you mean \`${suggestion}\`?`;
}

/** A value that fits none of a union's branches: what each branch would have taken. */
function describeAlternatives(here: readonly SchemaError[]): string {
  const values: string[] = [];
  const types: string[] = [];
  for (const e of here) {
    if (e.keyword === 'const') values.push(showValue(e.params.allowedValue));
    else if (e.keyword === 'enum') values.push(...(e.params.allowedValues as unknown[]).map(showValue));
    else if (e.keyword === 'type') types.push(typeName(e.params.type));
  }
  if (values.length > 0) {
    const others = types.filter((t) => t !== 'text');
    return `must be one of: ${listed(values)}${others.length > 0 ? `, or ${others.join(' or ')}` : ''}`;
  }
  if (types.length > 0) return `must be ${[...new Set(types)].join(' or ')}`;
  return 'is not in any of the accepted forms';
}

function describeKeyword({ keyword, params }: SchemaError): string {
  switch (keyword) {
    case 'type':
      return `must be ${typeName(params.type)}`;
    case 'pattern':
      return describePattern(String(params.pattern)) ?? 'has the wrong form';
    case NUL_KEYWORD:
      return 'contains a NUL character (U+0000), which no value of it can hold';
    case 'format':
      return describeFormat(String(params.format));
    case 'enum':
      return `must be one of: ${listed((params.allowedValues as unknown[]).map(showValue))}`;
    case 'const':
      return `must be ${showValue(params.allowedValue)}`;
    case 'minLength':
      return Number(params.limit) === 1
        ? 'must not be empty'
        : `must be at least ${counted(params.limit, 'character', 'characters')} long`;
    case 'maxLength':
      return `must be at most ${counted(params.limit, 'character', 'characters')} long`;
    case 'minItems':
      return `needs at least ${counted(params.limit, 'entry', 'entries')}`;
    case 'maxItems':
      return `can have at most ${counted(params.limit, 'entry', 'entries')}`;
    case 'uniqueItems':
      return 'must not contain the same entry twice';
    case 'minimum':
      return `must be at least ${params.limit}`;
    case 'maximum':
      return `must be at most ${params.limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${params.limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${params.limit}`;
    case 'multipleOf':
      return `must be a multiple of ${params.multipleOf ?? params.limit}`;
    case 'minProperties':
      return `needs at least ${counted(params.limit, 'field', 'fields')}`;
    case 'maxProperties':
      return `can have at most ${counted(params.limit, 'field', 'fields')}`;
    default:
      return 'is not valid here';
  }
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
  array: 'a list (a JSON array)',
  object: 'a JSON object',
  null: 'null',
};

function typeName(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_NAMES[String(t)] ?? 'of another kind').join(' or ');
}

const FORMATS: Record<string, string> = {
  date: 'must be a date such as 2026-11-25',
  'date-time': 'must be a date and time such as 2026-11-25T14:30:00Z',
  time: 'must be a time such as 14:30:00Z',
  uri: 'must be a URL such as https://example.com/hooks',
  url: 'must be a URL such as https://example.com/hooks',
  uuid: 'must be a UUID such as 5b0f1f5e-8c1a-4f0e-9d3a-1c2b3d4e5f60',
  email: 'must be an email address such as info@apotheke.example',
};

function describeFormat(format: string): string {
  return FORMATS[format] ?? `must be a valid ${format.replace(/[^a-z0-9-]/gi, '')}`;
}

function counted(limit: unknown, one: string, many: string): string {
  return Number(limit) === 1 ? `1 ${one}` : `${limit} ${many}`;
}

function listed(values: readonly string[]): string {
  const shown = values.slice(0, LISTED_MAX).join(', ');
  return values.length > LISTED_MAX ? `${shown} and ${values.length - LISTED_MAX} more` : shown;
}

function showValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A field path in backticks, shortened and without backticks or control characters of its own. */
function shownName(path: string): string {
  const clean = path.replace(/[`\u0000-\u001f\u007f]/g, '?');
  return `\`${clean.length > SHOWN_MAX ? `${clean.slice(0, SHOWN_MAX)}…` : clean}\``;
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
