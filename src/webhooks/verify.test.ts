import { describe, expect, it } from 'vitest';
import { VECTORS_NOW, webhookVectors } from '../../test/webhook-vectors.js';
import { deliveryHeaders } from './sign.js';
import { generateSigningSecret } from './subscriptions/secrets.js';
import { verifyWebhook, type WebhookVerificationError } from './verify.js';

const NOW = Date.UTC(2026, 0, 5, 9, 0, 0);
const event = {
  id: 'evt_4711',
  type: 'delivery.received',
  created_at: new Date(NOW).toISOString(),
  livemode: false,
  wholesaler: 'phoenix',
  customer_id: '123456',
  data: { tracking_number: 'L-1' },
};
const body = JSON.stringify(event);

function signed(secrets: string[], options: { at?: number; payload?: string } = {}) {
  return deliveryHeaders({
    eventId: event.id,
    eventType: event.type,
    deliveryId: 'whd_1',
    attempt: 1,
    body: options.payload ?? body,
    secrets,
    timestampSeconds: Math.floor((options.at ?? NOW) / 1000),
    userAgent: 'test',
  });
}

function failure(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    return error as WebhookVerificationError;
  }
  throw new Error('expected verifyWebhook to throw');
}

describe('verifyWebhook', () => {
  const secret = generateSigningSecret();
  const now = () => NOW + 30_000;

  it('returns the parsed event for a good delivery (string or bytes, any header casing)', () => {
    const headers = signed([secret]);
    expect(verifyWebhook(body, headers, secret, { now })).toEqual(event);
    expect(verifyWebhook(Buffer.from(body), new Headers(headers), secret, { now })).toEqual(event);
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(new TextEncoder().encode(body), shouting, secret, { now }).id).toBe('evt_4711');
  });

  it('rejects a tampered body, a tampered signature and another secret', () => {
    const headers = signed([secret]);
    expect(failure(() => verifyWebhook(body.replace('L-1', 'L-2'), headers, secret, { now })).code).toBe(
      'signature_mismatch',
    );
    const forged = { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
    expect(failure(() => verifyWebhook(body, forged, secret, { now })).code).toBe('signature_mismatch');
    expect(failure(() => verifyWebhook(body, headers, generateSigningSecret(), { now })).code).toBe(
      'signature_mismatch',
    );
  });

  it('rejects a replayed delivery older than the tolerance, and one from the future', () => {
    const headers = signed([secret]);
    expect(failure(() => verifyWebhook(body, headers, secret, { now: () => NOW + 301_000 })).code).toBe(
      'timestamp_too_old',
    );
    expect(verifyWebhook(body, headers, secret, { now: () => NOW + 299_000 }).id).toBe('evt_4711');
    expect(failure(() => verifyWebhook(body, headers, secret, { now: () => NOW - 301_000 })).code).toBe(
      'timestamp_in_future',
    );
    expect(
      verifyWebhook(body, headers, secret, { now: () => NOW + 3_000_000, toleranceSeconds: 3600 }).id,
    ).toBe('evt_4711');
  });

  it('accepts either secret while a rotation overlaps, and rejects the old one once it no longer signs', () => {
    const [fresh, old] = [generateSigningSecret(), generateSigningSecret()];
    const during = signed([fresh, old]);
    expect(verifyWebhook(body, during, old, { now }).id).toBe('evt_4711');
    expect(verifyWebhook(body, during, fresh, { now }).id).toBe('evt_4711');
    const after = signed([fresh]);
    expect(failure(() => verifyWebhook(body, after, old, { now })).code).toBe('signature_mismatch');
    expect(verifyWebhook(body, after, [old, fresh], { now }).id).toBe('evt_4711');
  });

  it('verifies X-MSV3-Signature alone, or both schemes, on request', () => {
    const headers = signed([secret]);
    const msv3Only = { 'x-msv3-signature': headers['x-msv3-signature'] };
    expect(verifyWebhook(body, msv3Only, secret, { scheme: 'msv3' }).id).toBe('evt_4711');
    expect(failure(() => verifyWebhook(`${body} `, msv3Only, secret, { scheme: 'msv3' })).code).toBe(
      'signature_mismatch',
    );
    expect(verifyWebhook(body, headers, secret, { scheme: 'both', now }).id).toBe('evt_4711');
    expect(failure(() => verifyWebhook(body, msv3Only, secret, { scheme: 'both', now })).code).toBe(
      'missing_header',
    );
    const twoDigests = signed([generateSigningSecret(), secret])['x-msv3-signature']!.replace(' ', ', ');
    expect(verifyWebhook(body, { 'x-msv3-signature': twoDigests }, secret, { scheme: 'msv3' }).id).toBe(
      'evt_4711',
    );
  });

  it('names what is missing or malformed', () => {
    expect(failure(() => verifyWebhook(body, {}, secret)).code).toBe('missing_header');
    const headers = { ...signed([secret]), 'webhook-timestamp': 'yesterday' };
    expect(failure(() => verifyWebhook(body, headers, secret, { now })).code).toBe('invalid_timestamp');
    const notJson = signed([secret], { payload: 'not json' });
    expect(failure(() => verifyWebhook('not json', notJson, secret, { now })).code).toBe('invalid_payload');
    const otherId = { ...signed([secret], { payload: body.replace('evt_4711', 'evt_other') }) };
    const swapped = failure(() =>
      verifyWebhook(body.replace('evt_4711', 'evt_other'), otherId, secret, { now }),
    );
    expect(swapped.code).toBe('invalid_payload');
    expect(() => verifyWebhook(body, signed([secret]), '')).toThrow(TypeError);
  });
});

describe('verifyWebhook on the shared test vectors (test/webhook-vectors.json)', () => {
  it.each(webhookVectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    const run = () =>
      verifyWebhook(vector.body, vector.headers, vector.secrets, {
        ...vector.options,
        now: () => VECTORS_NOW,
      });
    if ('event' in vector.expect) expect(run()).toEqual(vector.expect.event);
    else expect(failure(run).code).toBe(vector.expect.error);
  });
});
