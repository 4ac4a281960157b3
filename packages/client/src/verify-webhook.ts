import type { WebhookEvents } from './generated/api.js';

/**
 * Webhook verification with Web Crypto (`crypto.subtle`: Node 20 and later, Deno, Bun, browsers), so a
 * receiver needs nothing but this package. The same rules as the gateway's own `msv3-gateway/webhooks`
 * export, which is synchronous (node:crypto): both pass the same test vectors (test/webhook-vectors.json).
 */

/** Any webhook event, narrowed by `type`. */
export type WebhookEvent = WebhookEvents[keyof WebhookEvents];
export type WebhookEventType = keyof WebhookEvents;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /**
   * Which signature must be valid. `standard` (default): `webhook-signature` over id, timestamp and body,
   * with the timestamp inside the tolerance, so a captured delivery cannot be replayed later.
   * `msv3`: `X-MSV3-Signature` over the body only (no replay protection; dedupe on the event id).
   * `both`: both must be valid.
   */
  scheme?: 'standard' | 'msv3' | 'both';
  /** Largest accepted distance between `webhook-timestamp` and now, in seconds; default 300. */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch; for tests. */
  now?: () => number;
}

export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'signature_mismatch'
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const DEFAULT_TOLERANCE_SECONDS = 300;
const encoder = new TextEncoder();

/**
 * Verifies a webhook delivery from msv3-gateway and resolves to the parsed event; rejects with a
 * `WebhookVerificationError` (with a `code`) otherwise. Pass the raw request body exactly as received,
 * before any JSON parsing, and the signing secret (`whsec_…`), or several while a rotation runs: a
 * delivery then carries one signature per secret, and one match is enough. Comparisons are constant-time
 * (`crypto.subtle.verify`).
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('verifyWebhook needs the signing secret');
  }
  const scheme = options.scheme ?? 'standard';
  let id: string | undefined;
  if (scheme !== 'msv3') id = await verifyStandard(body, headers, secrets, options);
  if (scheme !== 'standard') await verifyMsv3(body, headers, secrets);

  let event: WebhookEvent;
  try {
    event = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The body is not valid JSON.');
  }
  if (typeof event !== 'object' || event === null || typeof event.id !== 'string') {
    throw new WebhookVerificationError('invalid_payload', 'The body is not a webhook event.');
  }
  if (id !== undefined && event.id !== id) {
    throw new WebhookVerificationError('invalid_payload', 'The event id does not match webhook-id.');
  }
  return event;
}

async function verifyStandard(
  body: Uint8Array,
  headers: WebhookHeaders,
  secrets: string[],
  options: VerifyWebhookOptions,
): Promise<string> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError(
      'missing_header',
      'The webhook-id, webhook-timestamp and webhook-signature headers are required.',
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      'webhook-timestamp is not a Unix time in seconds.',
    );
  }
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const age = nowSeconds - Number(timestamp);
  if (age > tolerance) {
    throw new WebhookVerificationError('timestamp_too_old', `webhook-timestamp is ${age} seconds old.`);
  }
  if (age < -tolerance) {
    throw new WebhookVerificationError('timestamp_in_future', 'webhook-timestamp is in the future.');
  }
  const presented = signatures
    .split(/\s+/)
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => decodeBase64(entry.slice(3)));
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
  for (const secret of secrets) {
    if (await anyMatches(standardWebhooksKey(secret), signed, presented)) return id;
  }
  throw new WebhookVerificationError('signature_mismatch', 'No webhook-signature matches the secret.');
}

async function verifyMsv3(body: Uint8Array, headers: WebhookHeaders, secrets: string[]): Promise<void> {
  const signatures = header(headers, 'x-msv3-signature');
  if (signatures === undefined) {
    throw new WebhookVerificationError('missing_header', 'The X-MSV3-Signature header is required.');
  }
  const presented = signatures
    .split(/[\s,]+/)
    .filter((entry) => /^sha256=[0-9a-fA-F]{64}$/.test(entry))
    .map((entry) => decodeHex(entry.slice(7)));
  for (const secret of secrets) {
    // X-MSV3-Signature is keyed with the whole secret string, `whsec_` included.
    if (await anyMatches(encoder.encode(secret), body, presented)) return;
  }
  throw new WebhookVerificationError('signature_mismatch', 'No X-MSV3-Signature matches the secret.');
}

async function anyMatches(keyBytes: Uint8Array, data: Uint8Array, presented: Uint8Array[]): Promise<boolean> {
  if (presented.length === 0) return false;
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    keyBytes as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  for (const signature of presented) {
    const ok = await globalThis.crypto.subtle.verify(
      'HMAC',
      key,
      signature as Uint8Array<ArrayBuffer>,
      data as Uint8Array<ArrayBuffer>,
    );
    if (ok) return true;
  }
  return false;
}

/** The Standard Webhooks HMAC key: the base64 after `whsec_`, decoded. */
function standardWebhooksKey(secret: string): Uint8Array {
  return decodeBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
}

/** Lenient like Node's base64 decoder: URL-safe letters accepted, anything else outside the alphabet dropped. */
function decodeBase64(text: string): Uint8Array {
  const clean = text
    .replaceAll('-', '+')
    .replaceAll('_', '/')
    .replace(/[^A-Za-z0-9+/]/g, '');
  const usable = clean.length % 4 === 1 ? clean.slice(0, -1) : clean;
  const binary = atob(usable.padEnd(Math.ceil(usable.length / 4) * 4, '='));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

function decodeHex(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === 'function') {
    value = (headers as Headers).get(name);
  } else {
    const record = headers as Record<string, string | string[] | undefined>;
    value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  }
  if (Array.isArray(value)) value = value.join(' ');
  return value === null || value === undefined || value === '' ? undefined : value;
}
