import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import {
  AttemptResultSchema,
  CreateWebhookSchema,
  DeliveryListSchema,
  DeliveryParamsSchema,
  RevealedWebhookSchema,
  UpdateWebhookSchema,
  WebhookListSchema,
  WebhookSchema,
} from './webhooks.js';

// The OpenAPI document shows these examples; an example the schema refuses would mislead every reader.
const SCHEMAS: Record<string, TSchema> = {
  CreateWebhookSchema,
  UpdateWebhookSchema,
  WebhookSchema,
  RevealedWebhookSchema,
  WebhookListSchema,
  DeliveryListSchema,
  AttemptResultSchema,
};

describe('webhook subscription schemas', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name} carries examples that it accepts`, () => {
      const examples = (schema as { examples?: unknown[] }).examples;
      expect(examples?.length).toBeGreaterThan(0);
      for (const example of examples ?? []) expect([...Value.Errors(schema, example)]).toEqual([]);
    });
  }

  it('shows the secret masked in a subscription and in full only where it is revealed', () => {
    const [masked] = (WebhookSchema as { examples?: { signing_secret: string }[] }).examples ?? [];
    const [revealed] = (RevealedWebhookSchema as { examples?: { signing_secret: string }[] }).examples ?? [];
    expect(masked?.signing_secret).toMatch(/^whsec_\*{4}.{4}$/);
    expect(revealed?.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(revealed?.signing_secret.slice(-4)).toBe(masked?.signing_secret.slice(-4));
  });

  it('gives the path parameters examples of the right kind', () => {
    const { id, delivery_id } = DeliveryParamsSchema.properties as unknown as Record<
      string,
      { examples: string[] }
    >;
    expect(id?.examples[0]).toMatch(/^whk_/);
    expect(delivery_id?.examples[0]).toMatch(/^whd_/);
  });
});
