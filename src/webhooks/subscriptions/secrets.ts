import { randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes (256 bits), the Standard Webhooks secret format. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** `whsec_****abcd`: enough to tell two secrets apart, useless to an attacker. */
export function maskSigningSecret(secret: string): string {
  return `${SECRET_PREFIX}****${secret.slice(-4)}`;
}

/**
 * The HMAC key of the Standard Webhooks signature: the base64 after `whsec_`, decoded, as the
 * Standard Webhooks libraries do. (X-MSV3-Signature is keyed with the whole secret string instead.)
 */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}
