import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { withOpenApiDocument } from '../../../test/openapi-document.js';
import { EVENT_TYPES } from '../../core/event-types.js';
import { eventExample, eventSchema } from './webhook-events.js';

describe('webhooks in the OpenAPI document', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
  let doc: any;
  withOpenApiDocument((document) => {
    doc = document;
  });

  it('lists every event under OpenAPI 3.1 `webhooks`, with its envelope, data schema and headers', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES, 'ping'].sort());
    // biome-ignore lint/suspicious/noExplicitAny: plain JSON
    for (const [type, item] of Object.entries(doc.webhooks) as [string, { post: any }][]) {
      const schema = item.post.requestBody.content['application/json'].schema;
      expect(schema.required).toEqual([
        'id',
        'type',
        'created_at',
        'livemode',
        'wholesaler',
        'customer_id',
        'data',
      ]);
      expect(schema.properties.type.const).toBe(type);
      expect(schema.properties.data.type).toBe('object');
      expect(item.post.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining([
          'X-MSV3-Signature',
          'X-MSV3-Event',
          'X-MSV3-Request-Id',
          'webhook-signature',
        ]),
      );
      expect(item.post.description.length).toBeGreaterThan(20);
    }
  });

  it('describes `data` with the response schemas of the endpoints that show the same resource', () => {
    const dataOf = (type: string) =>
      doc.webhooks[type].post.requestBody.content['application/json'].schema.properties.data;
    const responseOf = (path: string) =>
      doc.paths[path].get.responses['200'].content['application/json'].schema;
    expect(dataOf('delivery.received')).toEqual(responseOf('/v1/deliveries').properties.deliveries.items);
    expect(dataOf('delivery.shortage')).toEqual(dataOf('delivery.received'));
    const status = responseOf('/v1/orders/{order_id}/status');
    expect(dataOf('order.status_changed').properties).toEqual({
      ...status.properties,
      previous_status: expect.objectContaining({ anyOf: expect.any(Array) }),
    });
    expect(dataOf('order.status_changed').required).toEqual([...status.required, 'previous_status']);
  });

  it('gives every event an example that its schema accepts', () => {
    for (const type of [...EVENT_TYPES, 'ping' as const]) {
      const content = doc.webhooks[type].post.requestBody.content['application/json'];
      expect(content.example).toEqual(eventExample(type));
      expect([...Value.Errors(eventSchema(type), content.example)], type).toEqual([]);
    }
  });

  it('documents the subscription endpoints', () => {
    const operations = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((path) => Object.values(path))
      .map((operation) => operation.operationId);
    expect(operations).toEqual(
      expect.arrayContaining([
        'createWebhook',
        'listWebhooks',
        'getWebhook',
        'updateWebhook',
        'deleteWebhook',
        'testWebhook',
        'listWebhookDeliveries',
        'retryWebhookDelivery',
        'rotateWebhookSecret',
      ]),
    );
    expect(doc.paths['/v1/webhooks'].post.responses['201']).toBeDefined();
    expect(doc.paths['/v1/webhooks/{id}'].delete.responses['204']).toBeDefined();
  });
});
