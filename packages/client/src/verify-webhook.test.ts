import { describe, expect, it } from 'vitest';
import { deliveryHeaders } from '../../../src/webhooks/sign.js';
import { generateSigningSecret } from '../../../src/webhooks/subscriptions/secrets.js';
import { verifyWebhook as verifyOnServer } from '../../../src/webhooks/verify.js';
import { VECTORS_NOW, webhookVectors } from '../../../test/webhook-vectors.js';
import { type VerifyWebhookOptions, verifyWebhook, type WebhookVerificationError } from './verify-webhook.js';

// The client's verifyWebhook (Web Crypto) and the gateway's msv3-gateway/webhooks export (node:crypto)
// must agree on every delivery the gateway's own signer produces, so the two cannot drift apart.

const NOW = Date.parse('2026-11-23T08:00:00Z');
const NOW_SECONDS = NOW / 1000;
const OLD = generateSigningSecret();
const NEW = generateSigningSecret();
const event = {
  id: 'evt_client_check',
  type: 'ping',
  created_at: '2026-11-23T08:00:00.000Z',
  livemode: false,
  wholesaler: 'phoenix',
  customer_id: null,
  data: { webhook_id: 'wh_1', message: 'Grüße' },
};
const body = JSON.stringify(event);

function signed(overrides: { secrets?: string[]; timestampSeconds?: number; eventId?: string } = {}) {
  return deliveryHeaders({
    eventId: overrides.eventId ?? event.id,
    eventType: event.type,
    deliveryId: 'whd_1',
    attempt: 1,
    body,
    secrets: overrides.secrets ?? [NEW],
    timestampSeconds: overrides.timestampSeconds ?? NOW_SECONDS,
    userAgent: 'msv3-gateway/test',
  });
}

type Outcome = { event: unknown } | { code: string };

async function bothOutcomes(
  rawBody: string | Uint8Array,
  headers: Record<string, string | string[] | undefined> | Headers,
  secret: string | string[],
  options: VerifyWebhookOptions = {},
): Promise<[Outcome, Outcome]> {
  const withNow = { ...options, now: () => NOW };
  const server = (() => {
    try {
      return { event: verifyOnServer(rawBody, headers, secret, withNow) };
    } catch (error) {
      return { code: (error as WebhookVerificationError).code };
    }
  })();
  const client = await verifyWebhook(rawBody, headers, secret, withNow).then(
    (verified) => ({ event: verified }),
    (error: WebhookVerificationError) => ({ code: error.code }),
  );
  return [client, server];
}

describe('verifyWebhook, client and gateway alike', () => {
  const cases: [string, () => Parameters<typeof bothOutcomes>, Outcome][] = [
    ['a delivery signed with the secret', () => [body, signed(), NEW], { event }],
    ['the bytes of the body', () => [new TextEncoder().encode(body), signed(), NEW], { event }],
    ['a Headers object', () => [body, new Headers(signed()), NEW], { event }],
    ['during a rotation, with the old secret', () => [body, signed({ secrets: [NEW, OLD] }), OLD], { event }],
    ['during a rotation, with the new one', () => [body, signed({ secrets: [NEW, OLD] }), NEW], { event }],
    ['a receiver holding both secrets', () => [body, signed(), [OLD, NEW]], { event }],
    ['X-MSV3-Signature', () => [body, signed({ secrets: [NEW, OLD] }), OLD, { scheme: 'msv3' }], { event }],
    ['both schemes', () => [body, signed(), NEW, { scheme: 'both' }], { event }],
    ['another secret', () => [body, signed(), OLD], { code: 'signature_mismatch' }],
    ['another secret, msv3', () => [body, signed(), OLD, { scheme: 'msv3' }], { code: 'signature_mismatch' }],
    [
      'a changed body',
      () => [body.replace('Grüße', 'Gruesse'), signed(), NEW],
      { code: 'signature_mismatch' },
    ],
    [
      'a delivery older than the tolerance',
      () => [body, signed({ timestampSeconds: NOW_SECONDS - 301 }), NEW],
      { code: 'timestamp_too_old' },
    ],
    [
      'a timestamp in the future',
      () => [body, signed({ timestampSeconds: NOW_SECONDS + 301 }), NEW],
      { code: 'timestamp_in_future' },
    ],
    [
      'a timestamp that is no number',
      () => [body, { ...signed(), 'webhook-timestamp': 'now' }, NEW],
      { code: 'invalid_timestamp' },
    ],
    [
      'no signature header',
      () => [body, { ...signed(), 'webhook-signature': undefined }, NEW],
      { code: 'missing_header' },
    ],
    [
      'a webhook-id of another event',
      () => [body, signed({ eventId: 'evt_other' }), NEW],
      { code: 'invalid_payload' },
    ],
  ];

  it.each(cases)('%s', async (_, input, expected) => {
    const [client, server] = await bothOutcomes(...input());
    expect(client).toEqual(expected);
    expect(server).toEqual(expected);
  });

  it('needs a secret', async () => {
    await expect(verifyWebhook(body, signed(), [])).rejects.toThrow(TypeError);
    await expect(verifyWebhook(body, signed(), '')).rejects.toThrow(TypeError);
  });
});

describe('verifyWebhook on the shared test vectors (test/webhook-vectors.json)', () => {
  it.each(webhookVectors.map((vector) => [vector.name, vector] as const))('%s', async (_name, vector) => {
    const outcome = verifyWebhook(vector.body, vector.headers, vector.secrets, {
      ...vector.options,
      now: () => VECTORS_NOW,
    });
    if ('event' in vector.expect) await expect(outcome).resolves.toEqual(vector.expect.event);
    else await expect(outcome).rejects.toMatchObject({ code: vector.expect.error });
  });
});
