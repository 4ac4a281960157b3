import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isDescribedPattern } from '../src/http/schemas/pattern-problems.js';
import { describeEachDialect } from './db.js';
import { type Gateway, type GatewayRequest, startGateway } from './gateway.js';

/**
 * The catalogue of common mistakes (docs/errors.md): bad requests a new user sends, through the real app
 * over a real socket, and every answer's message read for what a pharmacy developer should never see:
 * a regular expression, a plural after 1, a doubled word, a stringified nothing, a missing full stop.
 */
const item = { pzn: '04114918', quantity: 1 };
const returnItem = { tracking_number: 'LS-2025-000123', pzn: '04114918', quantity: 1, reason: 'damaged' };
const MISTAKES: Array<GatewayRequest & { expectError: string; param?: string }> = [
  // POST /v1/availability
  {
    method: 'POST',
    url: '/v1/availability',
    body: { items: [item] },
    expectError: 'invalid_request',
    param: 'wholesaler',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix' },
    expectError: 'invalid_request',
    param: 'items',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [] },
    expectError: 'invalid_request',
    param: 'items',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: 'abc', quantity: 1 }] },
    expectError: 'invalid_request',
    param: 'items[0].pzn',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: '123456789', quantity: 1 }] },
    expectError: 'invalid_request',
    param: 'items[0].pzn',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: 4114918, quantity: 1 }] },
    expectError: 'invalid_request',
    param: 'items[0].pzn',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: '1', quantity: '3' }] },
    expectError: 'invalid_request',
    param: 'items[0].quantity',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: '1', quantity: 1.5 }] },
    expectError: 'invalid_request',
    param: 'items[0].quantity',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: '1', quantity: 0 }] },
    expectError: 'invalid_request',
    param: 'items[0].quantity',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: '1', quantity: 100_000 }] },
    expectError: 'invalid_request',
    param: 'items[0].quantity',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ pzn: '1', quantitty: 1 }] },
    expectError: 'invalid_request',
    param: 'items[0].quantitty',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ ...item, demand_type: 'urgent' }] },
    expectError: 'invalid_request',
    param: 'items[0].demand_type',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [{ ...item, colour: 'red' }] },
    expectError: 'invalid_request',
    param: 'items[0].colour',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: item },
    expectError: 'invalid_request',
    param: 'items',
  },
  { method: 'POST', url: '/v1/availability', body: [item], expectError: 'invalid_request' },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: '', items: [item] },
    expectError: 'invalid_request',
    param: 'wholesaler',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phonix', items: [item] },
    expectError: 'wholesaler_not_found',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [item] },
    key: `pk_test_${'a'.repeat(36)}`,
    expectError: 'api_key_invalid',
  },
  {
    method: 'POST',
    url: '/v1/availability',
    body: { wholesaler: 'phoenix', items: [item] },
    key: 'sk_live_123',
    expectError: 'api_key_invalid',
  },
  // POST /v1/availability/bulk, /v1/orders
  {
    method: 'POST',
    url: '/v1/availability/bulk',
    body: { wholesaler: 'phoenix', pzns: [] },
    expectError: 'invalid_request',
    param: 'pzns',
  },
  {
    method: 'POST',
    url: '/v1/orders',
    body: { wholesaler: 'phoenix', items: [item, { pzn: '4114917', quantity: 1 }] },
    expectError: 'invalid_request',
    param: 'items[1].pzn',
  },
  {
    method: 'POST',
    url: '/v1/returns/offers',
    body: { wholesaler: 'phoenix', items: [{ pzn: '04114960', quantity: 1 }] },
    expectError: 'invalid_request',
    param: 'items[0].pzn',
  },
  {
    method: 'POST',
    url: '/v1/orders',
    body: { wholesaler: 'phoenix', items: Array.from({ length: 1001 }, () => item) },
    expectError: 'invalid_request',
    param: 'items',
  },
  {
    method: 'POST',
    url: '/v1/orders',
    body: { wholesaler: 'phoenix', items: [{ ...item, delivery_preference: 'fast' }] },
    expectError: 'invalid_request',
    param: 'items[0].delivery_preference',
  },
  {
    method: 'POST',
    url: '/v1/orders',
    query: { dry_run: 'perhaps' },
    body: { wholesaler: 'phoenix', items: [item] },
    expectError: 'invalid_request',
    param: 'dry_run',
  },
  {
    method: 'POST',
    url: '/v1/orders',
    query: { dryrun: 'true' },
    body: { wholesaler: 'phoenix', items: [item] },
    expectError: 'invalid_request',
    param: 'dryrun',
  },
  {
    method: 'POST',
    url: '/v1/orders',
    body: { wholesaler: 'phoenix', item: [item] },
    expectError: 'invalid_request',
    param: 'item',
  },
  {
    method: 'GET',
    url: '/v1/orders/GW-nope/status',
    query: { wholesaler: 'phoenix' },
    expectError: 'order_not_found',
  },
  // Deliveries, documents, contracts
  { method: 'GET', url: '/v1/deliveries', expectError: 'invalid_request', param: 'wholesaler' },
  {
    method: 'GET',
    url: '/v1/deliveries/history',
    query: { wholesaler: 'phoenix', limit: 'ten' },
    expectError: 'invalid_request',
    param: 'limit',
  },
  {
    method: 'GET',
    url: '/v1/deliveries/history',
    query: { wholesaler: 'phoenix', limit: '101' },
    expectError: 'invalid_request',
    param: 'limit',
  },
  {
    method: 'GET',
    url: '/v1/deliveries/history',
    query: { wholesaler: 'phoenix', date_from: '2026-02-30' },
    expectError: 'invalid_request',
    param: 'date_from',
  },
  {
    method: 'GET',
    url: '/v1/deliveries/history',
    query: { wholesaler: 'phoenix', tracking_number: 'LS 1' },
    expectError: 'invalid_request',
    param: 'tracking_number',
  },
  {
    method: 'GET',
    url: '/v1/deliveries/history',
    query: { wholesaler: 'phoenix', barcode: 'LS1' },
    expectError: 'invalid_request',
    param: 'barcode',
  },
  {
    method: 'POST',
    url: '/v1/deliveries/confirm',
    body: { wholesaler: 'phoenix', tracking_numbers: [] },
    expectError: 'invalid_request',
    param: 'tracking_numbers',
  },
  {
    method: 'POST',
    url: '/v1/deliveries/confirm',
    body: { wholesaler: 'phoenix', tracking_numbers: ['a b'] },
    expectError: 'invalid_request',
    param: 'tracking_numbers[0]',
  },
  {
    method: 'GET',
    url: '/v1/documents/not-a-uuid',
    query: { wholesaler: 'phoenix' },
    expectError: 'invalid_request',
    param: 'id',
  },
  {
    method: 'GET',
    url: '/v1/contracts',
    query: { wholesaler: 'phoenix', wholesalr: 'x' },
    expectError: 'invalid_request',
    param: 'wholesalr',
  },
  // Returns
  {
    method: 'POST',
    url: '/v1/returns',
    body: { wholesaler: 'phoenix', items: [{ ...returnItem, reason: 'broken' }] },
    expectError: 'invalid_request',
    param: 'items[0].reason',
  },
  {
    method: 'POST',
    url: '/v1/returns',
    body: { wholesaler: 'phoenix', items: [{ ...returnItem, expiry_date: '30.11.2027' }] },
    expectError: 'invalid_request',
    param: 'items[0].expiry_date',
  },
  {
    method: 'POST',
    url: '/v1/returns',
    body: { wholesaler: 'phoenix', items: [{ ...returnItem, batch: '' }] },
    expectError: 'invalid_request',
    param: 'items[0].batch',
  },
  {
    method: 'POST',
    url: '/v1/returns',
    body: { wholesaler: 'phoenix', items: [{ ...returnItem, batch: 'A\u0001' }] },
    expectError: 'invalid_request',
    param: 'items[0].batch',
  },
  {
    method: 'POST',
    url: '/v1/returns/announce',
    body: { wholesaler: 'phoenix', items: [returnItem], company: { vat: 'DE1' } },
    expectError: 'invalid_request',
    param: 'company.vat',
  },
  {
    method: 'POST',
    url: '/v1/returns/offers',
    body: { wholesaler: 'phoenix', items: [{ pzn: '1' }] },
    expectError: 'invalid_request',
    param: 'items[0].quantity',
  },
  // Connection, webhooks, custom wholesalers
  {
    method: 'POST',
    url: '/v1/connection/test',
    body: {},
    expectError: 'invalid_request',
    param: 'wholesaler',
  },
  {
    method: 'POST',
    url: '/v1/webhooks',
    body: { url: 'not a url', wholesaler: 'phoenix', events: ['order.status_changed'] },
    expectError: 'invalid_request',
    param: 'url',
  },
  {
    method: 'POST',
    url: '/v1/webhooks',
    body: { url: 'https://example.com/h', wholesaler: 'Phoenix!', events: ['order.status_changed'] },
    expectError: 'invalid_request',
    param: 'wholesaler',
  },
  {
    method: 'POST',
    url: '/v1/webhooks',
    body: { url: 'https://example.com/h', wholesaler: 'phoenix', events: [] },
    expectError: 'invalid_request',
    param: 'events',
  },
  { method: 'PATCH', url: '/v1/webhooks/wh_x', body: {}, expectError: 'invalid_request' },
  {
    method: 'PATCH',
    url: '/v1/webhooks/wh_x',
    body: { active: 'yes' },
    expectError: 'invalid_request',
    param: 'active',
  },
  {
    method: 'POST',
    url: '/v1/wholesalers/custom',
    body: { name: 'Haus' },
    expectError: 'invalid_request',
    param: 'endpoint',
  },
  { method: 'DELETE', url: '/v1/wholesalers/custom/-bad', expectError: 'invalid_request', param: 'id' },
  // Events feed
  {
    method: 'GET',
    url: '/v1/events',
    query: { limit: '101' },
    expectError: 'invalid_request',
    param: 'limit',
  },
  {
    method: 'GET',
    url: '/v1/events',
    query: { type: 'order.created' },
    expectError: 'invalid_request',
    param: 'type',
  },
  {
    method: 'GET',
    url: '/v1/events',
    query: { created_after: '2026-01-05' },
    expectError: 'invalid_request',
    param: 'created_after',
  },
  {
    method: 'GET',
    url: '/v1/events',
    query: { starting_after: 'whd_1' },
    expectError: 'invalid_request',
    param: 'starting_after',
  },
  { method: 'GET', url: '/v1/events/whd_1', expectError: 'invalid_request', param: 'id' },
  { method: 'GET', url: '/v1/events/evt_0000000000000000000000', expectError: 'resource_not_found' },
];

/** The same checks for any message; returns what is wrong with it, empty when nothing. */
function slips(message: string): string[] {
  const found: string[] = [];
  if (/\^\[|\]\{|\$|\\d|\\s|\[0-9|\{\d+,?\d*\}|\(\?[:=!<]/.test(message)) found.push('a regular expression');
  if (
    /must match|must NOT|must have required|allowed values|additional properties|schema is false/.test(
      message,
    )
  )
    found.push('validator wording');
  if (/\b1 (items|characters|entries|fields|digits)\b/.test(message)) found.push('a plural after 1');
  if (/\b(\w+) \1\b/i.test(message.replace(/`[^`]*`/g, ''))) found.push('a doubled word');
  if (/\bundefined\b|\[object Object\]|\bNaN\b|"null"/.test(message)) found.push('a stringified nothing');
  if (!/^(?:[A-Z]|`)/.test(message)) found.push('no capital letter or field name first');
  if (!/[.?]$/.test(message)) found.push('no full stop at the end');
  if (message.length >= 300) found.push(`${message.length} characters`);
  return found;
}

describeEachDialect('messages of the catalogue of common mistakes', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  it('reads every message of a bad request as a plain sentence naming the field', async () => {
    const problems: string[] = [];
    for (const { expectError, param, ...request } of MISTAKES) {
      const response = await gw.fetch(request);
      const body = (await response.json()) as { error: string; message: string; param?: string };
      const label = `${request.method} ${request.url} ${JSON.stringify(request.body ?? request.query ?? '').slice(0, 80)}`;
      if (body.error !== expectError) problems.push(`${label}: ${body.error} (${body.message})`);
      if (param !== undefined && body.param !== param) problems.push(`${label}: param ${body.param}`);
      for (const slip of slips(body.message)) problems.push(`${label}: ${slip} in "${body.message}"`);
    }
    expect(problems).toEqual([]);
  });

  it('says where malformed JSON goes wrong, quoting one character at most', async () => {
    const bodies = [
      '{"wholesaler": "phoenix",\n  "items": [\n    {"pzn": "1", }\n  ]\n}',
      '{"wholesaler": ',
      "{'a': 1}",
      '',
      'x'.repeat(5000),
    ];
    const messages: string[] = [];
    await gw.fetch({ url: '/v1/health', key: null }); // listens
    const { port } = gw.app.server.address() as AddressInfo;
    for (const raw of bodies) {
      const response = await fetch(`http://127.0.0.1:${port}/v1/availability`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': gw.keys.test.secret },
        body: raw,
      });
      const body = (await response.json()) as { error: string; message: string };
      expect(body.error).toBe('malformed_json');
      expect(slips(body.message)).toEqual([]);
      expect(body.message).not.toContain('xx');
      messages.push(body.message);
    }
    expect(messages[0]).toBe(
      'The request body is not valid JSON: unexpected `}` at line 3, column 18 (character 57).',
    );
    expect(messages[1]).toBe(
      'The request body is not valid JSON: it ends too early at line 1, column 16 (character 16).',
    );
    expect(messages[2]).toBe(
      "The request body is not valid JSON: unexpected `'` at line 1, column 2 (character 2).",
    );
  });

  it('has words for every pattern in the API description, so none is ever shown', async () => {
    const document = (await (await gw.fetch({ url: '/v1/openapi.json', key: null })).json()) as unknown;
    const patterns = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (typeof node === 'object' && node !== null)
        for (const [key, value] of Object.entries(node)) {
          if (key === 'pattern' && typeof value === 'string') patterns.add(value);
          else walk(value);
        }
    };
    walk(document);
    expect(patterns.size).toBeGreaterThan(5);
    expect([...patterns].filter((pattern) => !isDescribedPattern(pattern))).toEqual([]);
  });
});
