import { IsArray, IsObject, IsOptional, type TSchema } from 'typebox';
import { Value } from 'typebox/value';

type Filler = (value: unknown) => unknown;

/**
 * `Value.Default(schema, ·)`, specialised for one schema once: the same result (it mutates and returns
 * the value the same way), but only the parts of the schema that hold a `default` are visited. Objects
 * and arrays are walked by generated closures; any other node with defaults below it (unions,
 * intersections, records, tuples, refs, objects with an additionalProperties schema) is handed to
 * `Value.Default` for that subtree. Undefined when the schema has no defaults at all.
 *
 * Why: `Value.Default` interprets the whole schema for every request; for the 50-item availability body
 * that was ~40 µs of the ~55 µs validation, for one default (`demand_type`) per item.
 */
export function compileDefaults(schema: TSchema): Filler | undefined {
  return hasDefault(schema) ? fillerFor(schema) : undefined;
}

/**
 * The schema as a filled value meets it: a property the filler always gives a value (a default of its
 * own, on an object or in an array the filler walks) is listed as required. For a value that has been
 * through `compileDefaults(schema)`, checking against this schema gives the same verdicts and errors as
 * checking against `schema`. Why: TypeBox compiles an object without additional properties whose
 * properties are all required to a count of its keys, but one with an optional property to a
 * regular-expression test of each key; for the 50 availability items (`demand_type` defaults to
 * `direct`) that test was about 3 % of the gateway's instructions per request (docs/performance.md).
 */
export function requiredOnceFilled(schema: TSchema): TSchema {
  if (!hasDefaultBelow(schema)) return schema;
  if (walksProperties(schema)) {
    const properties: Record<string, TSchema> = { ...schema.properties };
    const required = new Set<string>((schema as { required?: string[] }).required ?? []);
    for (const [key, property] of Object.entries(schema.properties)) {
      if (!hasDefault(property)) continue;
      properties[key] = requiredOnceFilled(property);
      if (alwaysFilled(property)) required.add(key);
    }
    return { ...schema, properties, required: [...required] } as TSchema;
  }
  if (walksItems(schema)) return { ...schema, items: requiredOnceFilled(schema.items) } as TSchema;
  return schema; // filled by Value.Default, if at all: left as it is
}

/** A default the filler always writes: a value of its own, not a factory that may return undefined. */
function alwaysFilled(property: TSchema): boolean {
  const own = (property as { default?: unknown }).default;
  return own !== undefined && typeof own !== 'function';
}

function hasDefault(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  if ('default' in schema) return true;
  return Object.values(schema).some(hasDefault);
}

function hasDefaultBelow(schema: TSchema): boolean {
  return Object.entries(schema).some(([key, value]) => key !== 'default' && hasDefault(value));
}

const identity: Filler = (value) => value;

function fillerFor(schema: TSchema): Filler {
  const inner = hasDefaultBelow(schema) ? innerFiller(schema) : identity;
  if (!('default' in schema)) return inner;
  const own = (schema as { default: unknown }).default;
  const fresh = typeof own === 'function' ? (own as () => unknown) : () => Value.Clone(own);
  return inner === identity
    ? (value) => (value === undefined ? fresh() : value)
    : (value) => inner(value === undefined ? fresh() : value);
}

/**
 * The nodes the compiled filler walks itself (`innerFiller`), and so the nodes where `requiredOnceFilled`
 * knows what is filled: objects without an additionalProperties schema, and arrays of one item schema.
 */
function walksProperties(schema: TSchema): schema is TSchema & { properties: Record<string, TSchema> } {
  return IsObject(schema) && !hasAdditionalPropertiesSchema(schema);
}

function walksItems(schema: TSchema): schema is TSchema & { items: TSchema } {
  return IsArray(schema) && isSchema(schema.items);
}

/** What `Value.Default` does below a node's own default. */
function innerFiller(schema: TSchema): Filler {
  if (walksProperties(schema)) return objectFiller(schema);
  if (walksItems(schema)) return arrayFiller(schema.items);
  // The general interpreter for this subtree; the node's own default is already applied (value defined).
  return (value) => Value.Default(schema, value);
}

function objectFiller(schema: TSchema & { properties: Record<string, TSchema> }): Filler {
  const properties = Object.entries(schema.properties)
    .filter(([, property]) => hasDefault(property))
    .map(([key, property]) => ({
      key,
      fill: fillerFor(property),
      // As in Value.Default: an undefined result is not assigned for optional properties or properties
      // without a default of their own.
      skipUndefined: IsOptional(property) || !('default' in property),
    }));
  return (value) => {
    if (typeof value !== 'object' || value === null) return value;
    const object = value as Record<string, unknown>;
    for (const { key, fill, skipUndefined } of properties) {
      const current = object[key];
      const next = fill(current);
      if (next === undefined && skipUndefined) continue;
      // Writing back the value an own property already holds changes nothing; skipping that keyed store
      // saves more than the check costs.
      if (next !== current || !Object.hasOwn(object, key)) object[key] = next;
    }
    return value;
  };
}

function arrayFiller(items: TSchema): Filler {
  const fill = fillerFor(items);
  return (value) => {
    if (!Array.isArray(value)) return value;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const next = fill(item);
      if (next !== item || !(i in value)) value[i] = next;
    }
    return value;
  };
}

function hasAdditionalPropertiesSchema(schema: TSchema): boolean {
  const additional = (schema as { additionalProperties?: unknown }).additionalProperties;
  return additional !== undefined && typeof additional !== 'boolean';
}

function isSchema(value: unknown): value is TSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
