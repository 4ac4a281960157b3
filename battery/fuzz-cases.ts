import { randomUUID } from 'node:crypto';
import type { Random } from './random.js';

/**
 * Fuzzed requests for every operation of the gateway's own OpenAPI document: a valid request built from
 * the schemas' examples, then mutated (bodies, headers, query strings, path parameters, content types,
 * huge and odd values, valid and invalid keys). Every URL the fuzzer puts in a body is loopback or an IP
 * literal, so a gateway that accepts one never reaches beyond this machine (and needs no DNS).
 */

type Schema = Record<string, unknown>;

export interface Endpoint {
  method: string;
  /** OpenAPI path template, e.g. `/v1/webhooks/{id}`. */
  path: string;
  parameters: { in: string; name: string; schema: Schema; required: boolean }[];
  body?: Schema;
  /** It takes X-MSV3 credentials, so it calls a wholesaler (and may answer its 5xx kinds). */
  callsWholesaler: boolean;
  /** The error kinds the document lists per status (its responses' examples, one per kind). */
  errorKinds: Record<string, string[]>;
}

export interface FuzzContext {
  keys: { test: string; live: string };
  /** Marker password: it must never come back in an answer or a log line. */
  password: string;
  /** Ids that exist, so that some requests go deeper than a 404. */
  known: { webhooks: string[]; orders: string[]; trackingNumbers: string[]; custom: string[] };
  /** Loopback URLs the gateway may be given (a webhook sink, the mock wholesaler, a closed port). */
  urls: string[];
}

export interface FuzzRequest {
  method: string;
  /** Path and query, e.g. `/v1/orders?dry_run=true`. */
  target: string;
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
  endpoint: Endpoint;
  /** With the endpoint's own method and path: its answer is one the document lists for the endpoint. */
  asDocumented: boolean;
}

/** Every operation of the OpenAPI document (all methods and paths). */
export function endpointsOf(openapi: { paths: Record<string, Record<string, Schema>> }): Endpoint[] {
  const endpoints: Endpoint[] = [];
  for (const [path, operations] of Object.entries(openapi.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = ((operation.parameters ?? []) as Schema[]).map((p) => ({
        in: String(p.in),
        name: String(p.name),
        schema: (p.schema ?? {}) as Schema,
        required: p.required === true,
      }));
      const content = (operation.requestBody as Schema | undefined)?.content as
        | Record<string, Schema>
        | undefined;
      const body = content?.['application/json']?.schema as Schema | undefined;
      endpoints.push({
        method: method.toUpperCase(),
        path,
        parameters,
        ...(body === undefined ? {} : { body }),
        callsWholesaler: parameters.some((p) => p.name.toLowerCase() === 'x-msv3-username'),
        errorKinds: documentedErrorKinds(operation.responses as Record<string, Schema> | undefined),
      });
    }
  }
  return endpoints;
}

function documentedErrorKinds(responses: Record<string, Schema> | undefined): Record<string, string[]> {
  const kinds: Record<string, string[]> = {};
  for (const [status, response] of Object.entries(responses ?? {})) {
    if (Number(status) < 400) continue;
    const content = response.content as Record<string, Schema> | undefined;
    kinds[status] = Object.keys((content?.['application/json']?.examples as Schema | undefined) ?? {});
  }
  return kinds;
}

const WHOLESALERS = ['phoenix', 'phoenix_test', 'gehe', 'gehe_test', 'sanacorp', 'nobody', 'PHOENIX', ''];
/** Ordinary PZNs and the sandbox's scenario PZNs (faults, shortages, substitutions; docs/sandbox.md "Scenario PZNs"). */
const PZNS = [
  '04114918',
  '4114918',
  '04114918',
  '09990010',
  '09990027',
  '09990033',
  '09990056',
  '09990062',
  '09990079',
  '09990085',
  '09990116',
  '09990122',
  '09990139',
  '09990205',
  '09990211',
  '09990228',
  '09990234',
  '09990240',
  '09990257',
  '00000000',
  '99999999',
  '1',
];
const EVENTS = [
  'delivery.received',
  'delivery.shortage',
  'order.status_changed',
  'wholesaler.status_changed',
  'ping',
];
/**
 * Odd URLs, all of which stay on this machine or are refused whatever ALLOW_PRIVATE_ENDPOINTS says
 * (unspecified, multicast, user info, other schemes, unparsable): the fuzz gateway allows private
 * endpoints so that webhooks and custom wholesalers exist, and must never be handed a URL elsewhere.
 */
const BAD_URLS = [
  'http://0.0.0.0/',
  'http://[::]/',
  'http://2130706433:1/',
  'http://0x7f.1:1/',
  'http://[::ffff:127.0.0.1]:1/',
  'http://user:pw@127.0.0.1/',
  'ftp://127.0.0.1/',
  'javascript:alert(1)',
  'http://127.0.0.1:99999/',
  'http://[::1',
  'not a url',
  'http://224.0.0.1/',
  'file:///etc/passwd',
  'http://255.255.255.255/',
  '//127.0.0.1/',
  'http://127.0.0.1:1/%00',
];

/** Odd values: wrong types, limits, encodings; one in five is huge. */
function oddValue(rng: Random): unknown {
  if (rng.chance(0.2)) return hugeValue(rng);
  const values: unknown[] = [
    null,
    true,
    false,
    0,
    -1,
    2 ** 53 + 1,
    1.5,
    -1e21,
    Number.MAX_SAFE_INTEGER,
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '../../../../etc/passwd',
    '<a>]]></a>&amp;&#0;',
    '\ud800',
    [],
    {},
    '__proto__',
    "'; drop table orders; --",
    'ä\u202e\uFEFF\u2028',
    '💊',
    { $ref: '#', constructor: { prototype: { polluted: true } } },
  ];
  return rng.chance(0.2) ? rng.string(rng.int(40), '0123456789') : structuredClone(rng.pick(values));
}

function hugeValue(rng: Random): unknown {
  switch (rng.int(5)) {
    case 0:
      return '💊'.repeat(1 + rng.int(3000));
    case 1:
      return 'x'.repeat(1 + rng.int(200_000));
    case 2:
      return nested(rng.int(1000));
    case 3:
      return Array.from({ length: rng.int(20_000) }, () => '1');
    default:
      return rng.string(10_000);
  }
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** A plausible value for a named field: mostly valid, sometimes odd. */
function fieldValue(name: string, schema: Schema, rng: Random, ctx: FuzzContext): unknown {
  if (rng.chance(0.12)) return oddValue(rng);
  if (name === 'url' || name === 'endpoint') return rng.chance(0.6) ? rng.pick(ctx.urls) : rng.pick(BAD_URLS);
  if (name === 'wholesaler')
    return rng.pick([...WHOLESALERS, ...ctx.known.custom, ...ctx.known.custom.map((c) => `${c}_test`)]);
  if (name === 'pzn') return rng.pick(PZNS);
  if (name === 'tracking_number' && ctx.known.trackingNumbers.length > 0 && rng.chance(0.6))
    return rng.pick(ctx.known.trackingNumbers);
  if (name === 'events') return Array.from({ length: 1 + rng.int(3) }, () => rng.pick(EVENTS));
  if (name === 'quantity') return rng.pick([1, 2, 3, 10, 9999, 99999, 100000, 0]);
  return fromSchema(schema, rng, ctx, 0);
}

/** A valid-looking value built from the schema: its example, enum, or type. */
function fromSchema(schema: Schema, rng: Random, ctx: FuzzContext, depth: number): unknown {
  const examples = schema.examples as unknown[] | undefined;
  if (examples !== undefined && examples.length > 0 && rng.chance(0.8))
    return structuredClone(rng.pick(examples));
  if (Array.isArray(schema.enum)) return rng.pick(schema.enum as unknown[]);
  if (schema.const !== undefined) return schema.const;
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants !== undefined) return fromSchema(rng.pick(variants), rng, ctx, depth);
  const type = Array.isArray(schema.type) ? rng.pick(schema.type as string[]) : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      for (const [name, property] of Object.entries(properties)) {
        if (required.has(name) || rng.chance(0.4)) out[name] = fieldValue(name, property, rng, ctx);
      }
      return out;
    }
    case 'array': {
      if (depth > 4) return [];
      const items = (schema.items ?? {}) as Schema;
      return Array.from({ length: 1 + rng.int(3) }, () => fromSchema(items, rng, ctx, depth + 1));
    }
    case 'integer':
    case 'number':
      return rng.pick([1, 2, 5, 50, 100]);
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    default:
      return rng.string(1 + rng.int(12));
  }
}

/** Structural mutations of a body value. */
function mutate(value: unknown, rng: Random): unknown {
  if (typeof value !== 'object' || value === null) return rng.chance(0.3) ? oddValue(rng) : value;
  if (Array.isArray(value)) {
    if (rng.chance(0.2)) return [];
    if (rng.chance(0.15)) return Array.from({ length: 1 + rng.int(1200) }, () => structuredClone(value[0]));
    return value.map((v) => (rng.chance(0.3) ? mutate(v, rng) : v));
  }
  const record = { ...(value as Record<string, unknown>) };
  const keys = Object.keys(record);
  if (keys.length > 0 && rng.chance(0.25)) delete record[rng.pick(keys)];
  if (rng.chance(0.15))
    record[rng.pick(['extra', '__proto__', 'constructor', 'dry_run', 'id', rng.string(8)])] = oddValue(rng);
  for (const key of Object.keys(record)) if (rng.chance(0.25)) record[key] = mutate(record[key], rng);
  return record;
}

/** The body text: JSON of a (mutated) value, or broken text. */
function bodyText(value: unknown, rng: Random): string | Buffer {
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'null';
  } catch {
    // Nesting deeper than JSON.stringify manages: send the deep text itself.
    json = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
  }
  switch (rng.int(60)) {
    case 0:
      return json.slice(0, rng.int(json.length));
    case 1:
      return `${json}${rng.pick(['x', ',', '}', ' {}', '\u0000'])}`;
    case 2:
      return '';
    case 3:
      return Buffer.from(Array.from({ length: 1 + rng.int(4000) }, () => rng.int(256)));
    case 4:
      return `{"padding":"${'p'.repeat(1_100_000)}"}`;
    case 5:
      return '['.repeat(1 + rng.int(200_000));
    case 6:
      return json.replace('{', '{"wholesaler":"a","wholesaler":"b",');
    case 7:
      return `\uFEFF${json}`;
    case 8:
      return Buffer.from(json, 'utf16le');
    case 9:
      return json.replace(/\d+/, rng.pick(['1e309', '-0', '0x10', 'NaN', '1'.repeat(400), '01']));
    case 10:
      return '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}';
    case 11:
      return 'null';
    case 12:
      return '"just a string"';
    default:
      return json;
  }
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=latin1',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json, text/plain',
  'application/vnd.api+json',
  ';;;',
  'application/soap+xml',
  '',
];

function apiKeyHeader(rng: Random, ctx: FuzzContext): string | string[] | undefined {
  const roll = rng.next();
  if (roll < 0.55) return ctx.keys.test;
  if (roll < 0.75) return ctx.keys.live;
  if (roll < 0.8) return undefined;
  if (roll < 0.85) return `pk_test_${rng.string(36, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
  if (roll < 0.9) return [ctx.keys.test, ctx.keys.live];
  return rng.pick([
    '',
    ' ',
    'pk_live_',
    ctx.keys.test.slice(0, -1),
    `${ctx.keys.test}x`,
    'x'.repeat(5000),
    'Bearer abc',
  ]);
}

function credentialHeaders(rng: Random, ctx: FuzzContext, headers: Record<string, string | string[]>): void {
  const roll = rng.next();
  if (roll < 0.75) {
    headers['x-msv3-username'] = rng.pick([
      'apotheke1',
      'PLA\\apotheke1',
      'apo1nobulk',
      'apo1nobulknoreturns',
      'fuzz',
    ]);
    headers['x-msv3-password'] = rng.chance(0.9) ? ctx.password : rng.pick(['wrong-password', 'forbidden']);
  } else if (roll < 0.8) {
    headers['x-msv3-username'] = 'apotheke1';
  } else if (roll < 0.85) {
    headers['x-msv3-password'] = ctx.password;
  } else if (roll < 0.95) {
    headers['x-msv3-username'] = rng.pick(['', ' ', 'ä'.repeat(300), 'x'.repeat(10_000), 'a:b', '\\\\']);
    headers['x-msv3-password'] = rng.chance(0.5)
      ? ctx.password
      : `${ctx.password}${'y'.repeat(rng.int(9000))}`;
  }
}

function idempotencyHeader(rng: Random): string | string[] | undefined {
  const roll = rng.next();
  if (roll < 0.5) return undefined;
  if (roll < 0.8) return randomUUID();
  if (roll < 0.9) return `fuzz-reused-${rng.int(20)}`;
  return rng.pick(['', ' ', 'k'.repeat(300), 'schlüssel', ['a', 'b'], 'tab\tkey']);
}

/** encodeURIComponent, except that a lone surrogate becomes the bytes of one (invalid UTF-8), as a sloppy client sends it. */
function encode(value: string): string {
  return value
    .replace(/[\ud800-\udfff]/g, '\u0000')
    .split('\u0000')
    .map(encodeURIComponent)
    .join('%ED%A0%80');
}

/** A path parameter: an existing id, or something odd (percent-encoded as a client would). */
function pathValue(name: string, rng: Random, ctx: FuzzContext): string {
  if (rng.chance(0.45)) {
    const pool = name === 'order_id' ? ctx.known.orders : name === 'id' ? ctx.known.webhooks : [];
    if (pool.length > 0) return encode(rng.pick(pool));
  }
  const raw = rng.pick([
    'whk_x',
    'GW-x',
    'doc-1',
    '..',
    '%2e%2e',
    '%zz',
    '%00',
    'a%2Fb',
    'x'.repeat(5000),
    '💊',
    '',
  ]);
  return rng.chance(0.5) ? raw : encode(String(oddValue(rng)).slice(0, 3000));
}

function queryString(endpoint: Endpoint, rng: Random, ctx: FuzzContext): string {
  const pairs: string[] = [];
  for (const p of endpoint.parameters.filter((x) => x.in === 'query')) {
    if (!p.required && rng.chance(0.5)) continue;
    if (p.required && rng.chance(0.05)) continue;
    const value = rng.chance(0.8) ? fieldValue(p.name, p.schema, rng, ctx) : oddValue(rng);
    pairs.push(`${encode(p.name)}=${encode(String(value).slice(0, 5000))}`);
    if (rng.chance(0.05)) pairs.push(`${encode(p.name)}=again`);
  }
  if (rng.chance(0.1))
    pairs.push(
      rng.pick([
        'unknown=1',
        '__proto__[x]=1',
        'a[]=1&a[]=2',
        '=',
        '&&',
        `big=${'q'.repeat(8000)}`,
        '%zz=%zz',
      ]),
    );
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

/** One fuzzed request for `endpoint` (sometimes with another method, or on a path that does not exist). */
export function fuzzRequest(endpoint: Endpoint, rng: Random, ctx: FuzzContext): FuzzRequest {
  let method = endpoint.method;
  if (rng.chance(0.04))
    method = rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE']);
  let path = endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => pathValue(name, rng, ctx));
  const ownPath = path;
  if (rng.chance(0.03))
    path = rng.pick([
      `${path}/extra`,
      `${path}/`,
      path.toUpperCase(),
      `/v2${path.slice(3)}`,
      `//${path}`,
      `${path};x`,
    ]);
  const headers: Record<string, string | string[]> = {};
  const apiKey = apiKeyHeader(rng, ctx);
  if (apiKey !== undefined) headers['x-api-key'] = apiKey;
  if (endpoint.callsWholesaler || rng.chance(0.1)) credentialHeaders(rng, ctx, headers);
  const idempotencyKey = idempotencyHeader(rng);
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  if (rng.chance(0.05))
    headers[
      rng.pick(['accept', 'accept-encoding', 'x-request-id', 'x-forwarded-for', 'content-encoding', 'origin'])
    ] = rng.pick([
      '*/*',
      'gzip',
      'application/xml',
      'x'.repeat(4000),
      'req_abc',
      '127.0.0.1, 10.0.0.1',
      'br',
      'null',
    ]);
  let body: string | Buffer | undefined;
  if (endpoint.body !== undefined || rng.chance(0.05)) {
    const valid = endpoint.body === undefined ? {} : fromSchema(endpoint.body, rng, ctx, 0);
    const value = rng.chance(0.6) ? mutate(valid, rng) : valid;
    body = bodyText(value, rng);
    if (rng.chance(0.95))
      headers['content-type'] = rng.chance(0.7) ? 'application/json' : rng.pick(CONTENT_TYPES);
  }
  if (method === 'GET' || method === 'HEAD') body = rng.chance(0.03) ? body : undefined;
  return {
    method,
    target: `${path}${queryString(endpoint, rng, ctx)}`,
    headers,
    ...(body === undefined ? {} : { body }),
    endpoint,
    asDocumented: method === endpoint.method && path === ownPath,
  };
}
