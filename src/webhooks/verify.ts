import { createHmac, timingSafeEqual } from 'node:crypto';
import { standardWebhooksKey } from './subscriptions/secrets.js';

/** The body of every webhook delivery. */
export interface WebhookEvent<Data = unknown> {
  /** `evt_…`, the same on every retry; use it to drop duplicates. */
  id: string;
  type: string;
  /** ISO 8601, when the event happened. */
  created_at: string;
  livemode: boolean;
  wholesaler: string;
  customer_id: string | null;
  data: Data;
}

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
  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Verifies a webhook delivery from msv3-gateway and returns the parsed event; throws a
 * `WebhookVerificationError` (with a `code`) otherwise. Pass the raw request body exactly as received,
 * before any JSON parsing, and the signing secret (`whsec_…`; an array while you roll a new one out).
 * Comparisons are constant-time.
 */
export function verifyWebhook<Data = unknown>(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent<Data> {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => s === '')) {
    throw new TypeError('verifyWebhook needs the signing secret');
  }
  const scheme = options.scheme ?? 'standard';
  let id: string | undefined;
  if (scheme !== 'msv3') id = verifyStandard(body, headers, secrets, options);
  if (scheme !== 'standard') verifyMsv3(body, headers, secrets);

  let event: WebhookEvent<Data>;
  try {
    event = JSON.parse(body.toString('utf8'));
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

function verifyStandard(
  body: Buffer,
  headers: WebhookHeaders,
  secrets: string[],
  options: VerifyWebhookOptions,
): string {
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
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  for (const secret of secrets) {
    const expected = createHmac('sha256', standardWebhooksKey(secret))
      .update(`${id}.${timestamp}.`)
      .update(body)
      .digest();
    if (presented.some((candidate) => sameBytes(candidate, expected))) return id;
  }
  throw new WebhookVerificationError('signature_mismatch', 'No webhook-signature matches the secret.');
}

function verifyMsv3(body: Buffer, headers: WebhookHeaders, secrets: string[]): void {
  const signatures = header(headers, 'x-msv3-signature');
  if (signatures === undefined) {
    throw new WebhookVerificationError('missing_header', 'The X-MSV3-Signature header is required.');
  }
  const presented = signatures
    .split(/[\s,]+/)
    .filter((entry) => /^sha256=[0-9a-fA-F]{64}$/.test(entry))
    .map((entry) => Buffer.from(entry.slice(7), 'hex'));
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(body).digest();
    if (presented.some((candidate) => sameBytes(candidate, expected))) return;
  }
  throw new WebhookVerificationError('signature_mismatch', 'No X-MSV3-Signature matches the secret.');
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
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
