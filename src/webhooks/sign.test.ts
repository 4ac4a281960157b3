import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookVectors } from '../../test/webhook-vectors.js';
import { deliveryHeaders, msv3Signature, standardSignature } from './sign.js';
import { generateSigningSecret, maskSigningSecret, standardWebhooksKey } from './subscriptions/secrets.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (!hasOpenssl)
  console.warn('[tests] openssl is missing: the independent X-MSV3-Signature vectors are skipped.');

/** HMAC-SHA256 hex of `body` keyed with `key`, computed by the openssl binary, not by node. */
function opensslHmacHex(key: string, body: string): string {
  const run = spawnSync('openssl', ['dgst', '-sha256', '-hmac', key], { input: body });
  expect(run.status).toBe(0);
  return run.stdout.toString().trim().split(/\s+/).pop()!;
}

describe('X-MSV3-Signature', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const bodies = [
    '{"id":"evt_1","type":"delivery.received","data":{}}',
    '{"umlaut":"Müller & Söhne","emoji":"💊"}',
    '',
  ];

  it.skipIf(!hasOpenssl).each(bodies)('matches openssl dgst -sha256 -hmac for %j', (body) => {
    expect(msv3Signature(body, secret)).toBe(`sha256=${opensslHmacHex(secret, body)}`);
  });

  it.skipIf(!hasOpenssl)('is keyed with the whole secret string, prefix included', () => {
    const body = '{"a":1}';
    expect(msv3Signature(body, secret)).not.toBe(`sha256=${opensslHmacHex(secret.slice(6), body)}`);
  });
});

describe('Standard Webhooks signature', () => {
  it('reproduces the published Standard Webhooks test vector', () => {
    expect(
      standardSignature(
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs "{id}.{timestamp}.{body}" with the base64-decoded secret', () => {
    const secret = generateSigningSecret();
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update('evt_1.1700000000.{"x":1}').digest('base64');
    expect(standardSignature('evt_1', 1700000000, '{"x":1}', secret)).toBe(`v1,${expected}`);
  });
});

describe('signing secrets', () => {
  it('are whsec_ + base64 of 32 random bytes, all different', () => {
    const secrets = new Set(Array.from({ length: 50 }, generateSigningSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(standardWebhooksKey(secret)).toHaveLength(32);
    }
  });

  it('are masked to their last four characters', () => {
    expect(maskSigningSecret('whsec_abcdefghijklmnopqrstuvwxyz012345678901234=')).toBe('whsec_****234=');
  });
});

describe('deliveryHeaders', () => {
  const input = {
    eventId: 'evt_abc',
    eventType: 'delivery.received',
    deliveryId: 'whd_1',
    attempt: 3,
    body: '{"id":"evt_abc"}',
    timestampSeconds: 1_767_600_000,
    userAgent: 'msv3-gateway-webhooks/1.0.0',
  };

  it('carries the X-MSV3 headers, the Standard Webhooks headers and the attempt number', () => {
    const secret = generateSigningSecret();
    const headers = deliveryHeaders({ ...input, secrets: [secret] });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'msv3-gateway-webhooks/1.0.0',
      'x-msv3-event': 'delivery.received',
      'x-msv3-request-id': 'evt_abc',
      'x-msv3-event-id': 'evt_abc',
      'x-msv3-delivery-id': 'whd_1',
      'x-msv3-attempt': '3',
      'x-msv3-signature': msv3Signature(input.body, secret),
      'webhook-id': 'evt_abc',
      'webhook-timestamp': '1767600000',
      'webhook-signature': standardSignature('evt_abc', 1_767_600_000, input.body, secret),
    });
  });

  it('lists one signature per secret, newest first, space-separated, during a rotation', () => {
    const [current, previous] = [generateSigningSecret(), generateSigningSecret()];
    const headers = deliveryHeaders({ ...input, secrets: [current, previous] });
    expect(headers['x-msv3-signature']).toBe(
      `${msv3Signature(input.body, current)} ${msv3Signature(input.body, previous)}`,
    );
    expect(headers['webhook-signature']!.split(' ')).toEqual([
      standardSignature('evt_abc', input.timestampSeconds, input.body, current),
      standardSignature('evt_abc', input.timestampSeconds, input.body, previous),
    ]);
  });
});

describe('the shared test vectors (test/webhook-vectors.json)', () => {
  it('carry the signatures this signer writes, so verifiers are checked against the real wire format', () => {
    const good = webhookVectors[0]!;
    const headers = deliveryHeaders({
      eventId: good.headers['webhook-id']!,
      eventType: 'delivery.received',
      deliveryId: 'whd_1',
      attempt: 1,
      body: good.body,
      secrets: good.secrets,
      timestampSeconds: Number(good.headers['webhook-timestamp']),
      userAgent: 'test',
    });
    expect(headers['webhook-signature']).toBe(good.headers['webhook-signature']);
    expect(headers['x-msv3-signature']).toBe(good.headers['x-msv3-signature']);
  });
});
