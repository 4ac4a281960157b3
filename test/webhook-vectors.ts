import { readFileSync } from 'node:fs';

/**
 * Deliveries the gateway signed, each with the outcome every verifier must give (`webhook-vectors.json`):
 * the server's `msv3-gateway/webhooks` export and the client package's `verifyWebhook` both run them.
 */
export interface WebhookVector {
  name: string;
  body: string;
  headers: Record<string, string>;
  secrets: string[];
  options?: { scheme?: 'standard' | 'msv3' | 'both'; toleranceSeconds?: number };
  expect: { event: unknown } | { error: string };
}

const file = JSON.parse(readFileSync(new URL('./webhook-vectors.json', import.meta.url), 'utf8')) as {
  now: number;
  vectors: WebhookVector[];
};

/** When the receiver checks (milliseconds since the epoch). */
export const VECTORS_NOW = file.now;
export const webhookVectors: readonly WebhookVector[] = file.vectors;
