import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { type Gateway, startGateway } from '../../test/gateway.js';

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

  it('still looks up ids without NUL as before (404 for an unknown webhook)', async () => {
    const response = await gw.inject({ method: 'GET', url: '/v1/webhooks/whk_unknown' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toBe('webhook_not_found');
  });
});
