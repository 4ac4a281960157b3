import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';

describeEachDialect('GET /v1/contracts', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  it('maps the contract data of a v2 wholesaler (docs/msv3.md "Contract data" plus additive fields)', async () => {
    const response = await gw.inject({ url: '/v1/contracts', query: { wholesaler: 'phoenix' } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      wholesaler: 'phoenix',
      customer_id: 'apotheke1',
      capabilities: {
        bulk_availability: true,
        return_offers: true,
        substitution: true,
        order_types: { normal: true, batch: true, special: true, shipping: false },
        specific_availability: true,
      },
      order_type_terms: {
        normal: { max_free_order_labels: expect.any(Number) },
        shipping: { agreed: false, complete_containers_only: expect.any(Boolean) },
      },
      valid_from: null,
      msv3_version: 2,
    });
    expect(body.delivery_windows.length).toBeGreaterThan(0);
    for (const window of body.delivery_windows) {
      expect(window).toEqual({
        day: expect.stringMatching(/^(monday|tuesday|wednesday|thursday|friday|saturday|sunday)$/),
        closes_at: expect.stringMatching(/^\d{2}:\d{2}$/),
        main_order_time: { day: expect.any(String), time: expect.stringMatching(/^\d{2}:\d{2}$/) },
      });
    }
    const mondays = body.delivery_windows.filter((w: { day: string }) => w.day === 'monday');
    expect(mondays.length).toBeGreaterThan(1);
    for (const day of body.special_days) {
      expect(day.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      for (const w of day.windows) expect(w.closes_at).toMatch(/^\d{2}:\d{2}$/);
    }
  });

  it('shows what the contract switches off', async () => {
    const response = await gw.inject({
      url: '/v1/contracts',
      query: { wholesaler: 'phoenix' },
      credentials: { username: 'apo1nobulknoreturnsnosubstunspecificnormalonly', password: 'x' },
    });
    expect(response.json().capabilities).toEqual({
      bulk_availability: false,
      return_offers: false,
      substitution: false,
      order_types: { normal: true, batch: false, special: false, shipping: false },
      specific_availability: false,
    });
  });

  it('maps a v1 contract: valid_from, no special days', async () => {
    const response = await gw.inject({ url: '/v1/contracts', query: { wholesaler: 'gehe' } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      wholesaler: 'gehe',
      msv3_version: 1,
      valid_from: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      special_days: [],
    });
  });

  it('needs the wholesaler query parameter, the MSV3 headers and a known wholesaler', async () => {
    const noQuery = await gw.inject({ url: '/v1/contracts' });
    expect(noQuery.statusCode).toBe(400);
    expect(noQuery.json()).toMatchObject({ error: 'invalid_request', param: 'wholesaler' });
    const noCredentials = await gw.inject({
      url: '/v1/contracts',
      query: { wholesaler: 'phoenix' },
      credentials: null,
    });
    expect(noCredentials.json()).toMatchObject({ error: 'wholesaler_credentials_missing' });
    const unknown = await gw.inject({ url: '/v1/contracts', query: { wholesaler: 'nobody' } });
    expect(unknown.statusCode).toBe(404);
    const rejected = await gw.inject({
      url: '/v1/contracts',
      query: { wholesaler: 'gehe' },
      credentials: { username: 'apotheke1', password: 'wrong-password' },
    });
    expect(rejected.statusCode).toBe(401);
  });
});
