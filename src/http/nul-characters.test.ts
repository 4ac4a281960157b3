import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { type Gateway, startGateway } from '../../test/gateway.js';
import { nulInJson, nulInValues } from './nul-characters.js';

/**
 * A NUL character (`%00`) in a path id or a query value once reached PostgreSQL, which refuses NUL in
 * text, and came back as 500 internal_error (found by `npm run battery`). Every such request is a 400
 * naming the parameter, on both dialects, before anything is looked up.
 */
describeEachDialect('NUL characters in paths and query strings', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  const cases: { method: 'GET' | 'PATCH' | 'DELETE' | 'POST'; url: string; param: string; body?: unknown }[] =
    [
      { method: 'GET', url: '/v1/webhooks/whk_%00', param: 'id' },
      { method: 'PATCH', url: '/v1/webhooks/%00', param: 'id', body: { active: false } },
      { method: 'DELETE', url: '/v1/webhooks/a%00b', param: 'id' },
      { method: 'GET', url: '/v1/webhooks/whk_x/deliveries?status=%00', param: 'status' },
      { method: 'GET', url: '/v1/webhooks/%00/deliveries', param: 'id' },
      { method: 'POST', url: '/v1/webhooks/%00/deliveries/%00/retry', param: 'id' },
      { method: 'GET', url: '/v1/orders/GW-%00/status?wholesaler=phoenix', param: 'order_id' },
      {
        method: 'GET',
        url: '/v1/deliveries/history?wholesaler=phoenix&starting_after=%00',
        param: 'starting_after',
      },
      { method: 'GET', url: '/v1/deliveries?wholesaler=ph%00oenix', param: 'wholesaler' },
      { method: 'DELETE', url: '/v1/wholesalers/custom/custom-a%00', param: 'id' },
    ];

  for (const { method, url, param, body } of cases) {
    it(`answers ${method} ${url} with 400 invalid_request naming \`${param}\`, never 500`, async () => {
      const response = await gw.inject({ method, url, ...(body === undefined ? {} : { body }) });
      const answer = response.json();
      expect({ status: response.statusCode, error: answer.error, param: answer.param }).toEqual({
        status: 400,
        error: 'invalid_request',
        param,
      });
      expect(answer.message).toMatch(/NUL character/);
      expect(answer.message).not.toContain('\u0000');
    });
  }

  const bodies: { url: string; body: unknown; param: string }[] = [
    // The wholesaler id is looked up among the account's custom wholesalers in the database.
    {
      url: '/v1/availability',
      body: { wholesaler: 'pho\u0000enix', items: [{ pzn: '04114918', quantity: 1 }] },
      param: 'wholesaler',
    },
    {
      url: '/v1/availability',
      body: { wholesaler: 'phoenix', items: [{ pzn: '0411\u0000918', quantity: 1 }] },
      param: 'items[0].pzn',
    },
    {
      url: '/v1/webhooks',
      body: { url: 'http://127.0.0.1:1/\u0000', wholesaler: 'phoenix', events: ['order.status_changed'] },
      param: 'url',
    },
  ];
  for (const { url, body, param } of bodies) {
    it(`answers a body with U+0000 in \`${param}\` to POST ${url} with 400 invalid_request naming it`, async () => {
      const response = await gw.inject({
        method: 'POST',
        url,
        body, // serialised with U+0000 as `\u0000`, as a JSON client sends it
      });
      expect({ status: response.statusCode, ...response.json() }).toMatchObject({
        status: 400,
        error: 'invalid_request',
        param,
        message: expect.stringMatching(/NUL character/),
      });
    });
  }

  it('still looks up ids without NUL as before (404 for an unknown webhook)', async () => {
    const response = await gw.inject({ method: 'GET', url: '/v1/webhooks/whk_unknown' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toBe('webhook_not_found');
  });
});

describe('finding NUL characters', () => {
  const hasNul = (value: unknown): boolean =>
    typeof value === 'string'
      ? value.includes('\u0000')
      : typeof value === 'object' && value !== null
        ? Object.entries(value).some(([key, inner]) => key.includes('\u0000') || hasNul(inner))
        : false;
  const resolve = (value: unknown, pointer: string): unknown =>
    pointer
      .split('/')
      .slice(1)
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((at: unknown, key) => (at as Record<string, unknown>)[key], value);
  const text = fc.string({ unit: fc.constantFrom('a', '/', '~', '\u0000', 'u0000', '\\', '"') });
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ maxDepth: 4 }, text, fc.integer(), fc.constant(null), tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  })).value;

  it('finds one in a JSON body exactly when a string or field name holds one, and points at it', () => {
    fc.assert(
      fc.property(json, (value) => {
        const found = nulInJson(JSON.stringify(value), value);
        expect(found !== undefined).toBe(hasNul(value));
        if (found === undefined) return;
        const at = resolve(value, found);
        const here =
          typeof at === 'string'
            ? at.includes('\u0000')
            : Object.keys(at as object).some((k) => k.includes('\u0000'));
        expect(here).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('finds one in path and query values, repeated query values included', () => {
    expect(nulInValues({ id: 'whk_1', status: ['ok', 'b\u0000'] })).toBe('/status');
    expect(nulInValues({ 'a/b': '\u0000' })).toBe('/a~1b');
    expect(nulInValues({ id: 'whk_1', limit: 3 })).toBeUndefined();
  });
});
