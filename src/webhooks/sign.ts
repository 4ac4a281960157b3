import { createHmac } from 'node:crypto';
import { standardWebhooksKey } from './subscriptions/secrets.js';

/** `sha256=<hex>`: HMAC-SHA256 of the raw body, keyed with the signing secret string (UTF-8). */
export function msv3Signature(body: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** `v1,<base64>`: HMAC-SHA256 of `{id}.{timestamp}.{body}` with the decoded secret (Standard Webhooks). */
export function standardSignature(
  id: string,
  timestampSeconds: number,
  body: string | Buffer,
  secret: string,
): string {
  return `v1,${createHmac('sha256', standardWebhooksKey(secret))
    .update(`${id}.${timestampSeconds}.`)
    .update(body)
    .digest('base64')}`;
}

export interface DeliveryHeaderInput {
  eventId: string;
  eventType: string;
  deliveryId: string;
  /** 1 for the first attempt. */
  attempt: number;
  body: string;
  /** Newest first; during a rotation the previous secret too. */
  secrets: readonly string[];
  timestampSeconds: number;
  userAgent: string;
}

/**
 * Every header a delivery carries. With several secrets, each signature header lists one signature
 * per secret, newest first, separated by a space (as Standard Webhooks does for `webhook-signature`).
 */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  const { body, eventId, secrets, timestampSeconds } = input;
  return {
    'content-type': 'application/json',
    'user-agent': input.userAgent,
    'x-msv3-event': input.eventType,
    'x-msv3-request-id': eventId,
    'x-msv3-event-id': eventId,
    'x-msv3-delivery-id': input.deliveryId,
    'x-msv3-attempt': String(input.attempt),
    'x-msv3-signature': secrets.map((secret) => msv3Signature(body, secret)).join(' '),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets
      .map((secret) => standardSignature(eventId, timestampSeconds, body, secret))
      .join(' '),
  };
}
