import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, type GatewayRequest, startGateway } from '../../../test/gateway.js';
import { placeSandboxOrder } from '../../../test/sandbox-orders.js';
import { SCENARIO_PASSWORDS, SCENARIO_PZNS } from '../../mock/index.js';
import { startReceiver } from '../../webhooks/test-support/receiver.js';
import { verifyWebhook } from '../../webhooks/verify.js';

describeEachDialect('delivery notice endpoints', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    // Private endpoints: a webhook receiver on 127.0.0.1 (the worker is never started; tests drain it).
    gw = await startGateway({ database: getDatabase(), env: { ALLOW_PRIVATE_ENDPOINTS: 'true' } });
  });
  afterAll(() => gw.close());

  // Every test is its own pharmacy, so notices of one test never show up in another.
  let pharmacies = 0;
  const newPharmacy = () => ({ username: `apo${++pharmacies}x`, password: 'pw-for-tests' });

  async function newDeliveries(credentials: { username: string; password: string }, wholesaler = 'phoenix') {
    return gw.inject({ url: '/v1/deliveries', query: { wholesaler }, credentials });
  }

  it("keeps each account's sandbox to itself, even for the same MSV3 user name", async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 2 }], { credentials: pharmacy });
    const other = await gw.createKey('test');
    const elsewhere = await gw.inject({
      url: '/v1/deliveries',
      query: { wholesaler: 'phoenix' },
      credentials: pharmacy,
      key: other.secret,
    });
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.json().deliveries).toEqual([]);
    expect((await newDeliveries(pharmacy)).json().deliveries).toHaveLength(1);
  });

  it('lists the notices of an order with items per PZN and the MSV3 detail', async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 3 }], { credentials: pharmacy });
    const response = await newDeliveries(pharmacy);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.wholesaler).toBe('phoenix');
    expect(body.deliveries).toHaveLength(1);
    const [notice] = body.deliveries;
    expect(notice).toMatchObject({
      tracking_number: expect.stringMatching(/^LS\d+/),
      order_type: 'normal',
      date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      has_shortages: false,
      items: [{ pzn: '04114918', quantity_delivered: 3, shortages: 0, article_name: expect.any(String) }],
      order_label: 'K1',
      document_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(notice.barcode).toContain(notice.tracking_number);
    expect(notice.lines[0].delivered[0]).toMatchObject({ quantity: 3, batch: expect.any(String) });
  });

  it('reports shortages and records delivery.received and delivery.shortage once per notice', async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity: 4 }], {
      credentials: pharmacy,
    });
    const first = (await newDeliveries(pharmacy)).json();
    expect(first.deliveries[0]).toMatchObject({
      has_shortages: true,
      items: [{ pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity_delivered: 2, shortages: 2 }],
    });
    await newDeliveries(pharmacy);
    const events = await gw.database.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('account_id', '=', gw.keys.test.accountId)
      .where('customer_id', '=', pharmacy.username)
      .orderBy('type')
      .execute();
    expect(events.map((e) => e.type)).toEqual(['delivery.received', 'delivery.shortage']);
    const payload = JSON.parse(events[0]!.payload);
    expect(payload).toMatchObject({ wholesaler: 'phoenix', livemode: false, data: first.deliveries[0] });
  });

  it('drops a confirmed notice from the new list and shows the confirmation in the history', async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 1 }], { credentials: pharmacy });
    const [notice] = (await newDeliveries(pharmacy)).json().deliveries;
    const confirm = await gw.inject({
      url: '/v1/deliveries/confirm',
      body: { wholesaler: 'phoenix', tracking_numbers: [notice.tracking_number, notice.tracking_number] },
      credentials: pharmacy,
    });
    expect(confirm.statusCode).toBe(200);
    expect(confirm.json()).toEqual({
      wholesaler: 'phoenix',
      confirmed: [notice.tracking_number],
      status: 'confirmed',
    });
    expect((await newDeliveries(pharmacy)).json().deliveries).toEqual([]);

    const history = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix' },
      credentials: pharmacy,
    });
    expect(history.statusCode).toBe(200);
    expect(history.json().deliveries).toEqual([
      {
        ...notice,
        first_seen_at: expect.stringMatching(/Z$/),
        last_seen_at: expect.stringMatching(/Z$/),
        confirmed_at: expect.stringMatching(/Z$/),
      },
    ]);
  });

  it('passes the wholesaler’s refusal of an unknown delivery note on as 422', async () => {
    const response = await gw.inject({
      url: '/v1/deliveries/confirm',
      body: { wholesaler: 'phoenix', tracking_numbers: ['LS-NEVER-ISSUED'] },
      credentials: newPharmacy(),
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({
      error: 'wholesaler_rejected_request',
      upstream: { kind: 'ValidationFault' },
    });
  });

  it('looks a notice up live by number or barcode, and says 404 for an unknown one', async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 2 }], { credentials: pharmacy });
    const notice = gw.mocks.sandbox.deliveryNotices(gw.sandboxTenant('phoenix'), pharmacy.username)[0]!
      .notice;

    const byNumber = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix', tracking_number: notice.deliveryNoteNumber },
      credentials: pharmacy,
    });
    expect(byNumber.statusCode).toBe(200);
    expect(byNumber.json()).toMatchObject({
      has_more: false,
      deliveries: [{ tracking_number: notice.deliveryNoteNumber, confirmed_at: null }],
    });
    const byBarcode = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix', barcode: notice.barcodeReference },
      credentials: pharmacy,
    });
    expect(byBarcode.json().deliveries[0].tracking_number).toBe(notice.deliveryNoteNumber);
    // Seen through the lookup, so the stored listing has it too.
    const listed = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix' },
      credentials: pharmacy,
    });
    expect(listed.json().deliveries.map((d: { tracking_number: string }) => d.tracking_number)).toEqual([
      notice.deliveryNoteNumber,
    ]);

    const unknown = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix', tracking_number: 'LS-UNKNOWN' },
      credentials: pharmacy,
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'delivery_not_found', wholesaler: 'phoenix' });
  });

  it('records and delivers delivery.received and delivery.shortage once for a notice first seen in a history lookup', async () => {
    // Its own account, so the subscription sees only this test's events; its own pharmacy.
    const key = await gw.createKey('test');
    const pharmacy = newPharmacy();
    const as = { key: key.secret, credentials: pharmacy };
    const receiver = await startReceiver();
    try {
      const created = await gw.inject({
        ...as,
        url: '/v1/webhooks',
        body: {
          url: receiver.url,
          wholesaler: 'phoenix',
          events: ['delivery.received', 'delivery.shortage'],
        },
      });
      expect(created.statusCode).toBe(201);
      const secret: string = created.json().signing_secret;
      // Placed straight at the sandbox: the gateway has never listed this notice.
      await placeSandboxOrder(gw, [{ pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity: 4 }], {
        key,
        credentials: pharmacy,
      });
      const [issued] = gw.mocks.sandbox.deliveryNotices(gw.sandboxTenant('phoenix', key), pharmacy.username);
      const { deliveryNoteNumber, barcodeReference } = issued!.notice;
      const eventsOfPharmacy = () =>
        gw.database.db
          .selectFrom('webhook_events')
          .select(['id', 'type', 'payload'])
          .where('account_id', '=', key.accountId)
          .where('customer_id', '=', pharmacy.username)
          .orderBy('type')
          .execute();
      expect(await eventsOfPharmacy()).toEqual([]);

      const lookup = (query: Record<string, string>) =>
        gw.inject({ ...as, url: '/v1/deliveries/history', query: { wholesaler: 'phoenix', ...query } });
      const found = await lookup({ tracking_number: deliveryNoteNumber });
      expect(found.statusCode).toBe(200);
      const [entry] = found.json().deliveries;
      expect(entry).toMatchObject({
        tracking_number: deliveryNoteNumber,
        has_shortages: true,
        items: [{ pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity_delivered: 2, shortages: 2 }],
        confirmed_at: null,
      });
      const events = await eventsOfPharmacy();
      expect(events.map((e) => e.type)).toEqual(['delivery.received', 'delivery.shortage']);

      // The event carries the notice as GET /v1/deliveries shows it: the history entry without its
      // history fields. Listing it now and looking it up again (by number, by barcode) adds nothing.
      const { first_seen_at, last_seen_at, confirmed_at, ...notice } = entry;
      expect([first_seen_at, last_seen_at]).toEqual([
        expect.stringMatching(/Z$/),
        expect.stringMatching(/Z$/),
      ]);
      for (const event of events) {
        expect(JSON.parse(event.payload)).toMatchObject({
          id: event.id,
          type: event.type,
          wholesaler: 'phoenix',
          livemode: false,
          customer_id: pharmacy.username,
          data: notice,
        });
      }
      expect((await lookup({ barcode: barcodeReference })).statusCode).toBe(200);
      expect((await lookup({ tracking_number: deliveryNoteNumber })).statusCode).toBe(200);
      const listed = await gw.inject({ ...as, url: '/v1/deliveries', query: { wholesaler: 'phoenix' } });
      expect(listed.json().deliveries).toEqual([notice]);
      expect(await eventsOfPharmacy()).toEqual(events);

      // Delivered: exactly these two, signed with the subscription's secret; a second drain sends nothing.
      expect(await gw.deps.webhooks.worker.drain()).toBe(2);
      const delivered = receiver.requests.map((r) =>
        verifyWebhook(r.body, r.headers, secret, { scheme: 'both' }),
      );
      expect(delivered.map((e) => [e.type, e.id]).sort()).toEqual(events.map((e) => [e.type, e.id]).sort());
      for (const event of delivered) expect(event.data).toEqual(notice);
      expect(await gw.deps.webhooks.worker.drain()).toBe(0);
      expect(receiver.requests).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('pages through the stored history with limit and starting_after', async () => {
    const pharmacy = newPharmacy();
    for (let i = 0; i < 3; i++)
      await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 1 }], { credentials: pharmacy });
    const seen = (await newDeliveries(pharmacy)).json().deliveries as { tracking_number: string }[];
    expect(seen).toHaveLength(3);
    const expected = seen
      .map((d) => d.tracking_number)
      .sort()
      .reverse();

    const page = async (query: Record<string, string>) =>
      gw.inject({
        url: '/v1/deliveries/history',
        query: { wholesaler: 'phoenix', ...query },
        credentials: pharmacy,
      });
    const first = (await page({ limit: '2' })).json();
    expect(first.has_more).toBe(true);
    const second = (await page({ limit: '2', starting_after: first.deliveries[1].tracking_number })).json();
    expect(second.has_more).toBe(false);
    expect([...first.deliveries, ...second.deliveries].map((d) => d.tracking_number)).toEqual(expected);

    const badCursor = await page({ starting_after: 'LS-NOT-MINE' });
    expect(badCursor.statusCode).toBe(400);
    expect(badCursor.json()).toMatchObject({ error: 'invalid_request', param: 'starting_after' });
    expect((await page({ date_to: '2000-01-01' })).json().deliveries).toEqual([]);
  });

  it('refuses date_from after date_to with 400 naming date_from, before calling the wholesaler', async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 1 }], { credentials: pharmacy });
    const [notice] = (await newDeliveries(pharmacy)).json().deliveries;
    const history = (query: Record<string, string>) =>
      gw.inject({
        url: '/v1/deliveries/history',
        query: { wholesaler: 'phoenix', ...query },
        credentials: pharmacy,
      });

    const before = gw.mocks.sandbox.requestCount();
    const reversed = await history({ date_from: '2026-11-26', date_to: '2026-11-20' });
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json()).toMatchObject({
      error: 'invalid_request',
      param: 'date_from',
      message: expect.stringContaining('date_from must not be after date_to'),
    });
    expect(gw.mocks.sandbox.requestCount()).toBe(before);

    // One day is a valid range: the bounds are inclusive.
    const oneDay = await history({ date_from: notice.date, date_to: notice.date });
    expect(oneDay.statusCode).toBe(200);
    expect(oneDay.json().deliveries.map((d: { tracking_number: string }) => d.tracking_number)).toEqual([
      notice.tracking_number,
    ]);
  });

  it('refuses date_from/date_to on a lookup by tracking number or barcode with 400 instead of ignoring them', async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 1 }], { credentials: pharmacy });
    const [notice] = (await newDeliveries(pharmacy)).json().deliveries;
    const lookup = (query: Record<string, string>) =>
      gw.inject({
        url: '/v1/deliveries/history',
        query: { wholesaler: 'phoenix', ...query },
        credentials: pharmacy,
      });

    const before = gw.mocks.sandbox.requestCount();
    const cases: [Record<string, string>, string][] = [
      [{ tracking_number: notice.tracking_number, date_from: '2000-01-01' }, 'date_from'],
      [{ tracking_number: notice.tracking_number, date_to: '2000-01-01' }, 'date_to'],
      [{ barcode: notice.barcode, date_from: notice.date, date_to: notice.date }, 'date_from'],
    ];
    for (const [query, param] of cases) {
      const response = await lookup(query);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_request', param });
      expect(response.json().message).toContain('stored listing only');
    }
    expect(gw.mocks.sandbox.requestCount()).toBe(before);
    expect((await lookup({ tracking_number: notice.tracking_number })).statusCode).toBe(200);
  });

  it('keeps one pharmacy’s history from another using the same API key', async () => {
    const a = newPharmacy();
    const b = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 1 }], { credentials: a });
    expect((await newDeliveries(a)).json().deliveries).toHaveLength(1);

    const asB = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix' },
      credentials: b,
    });
    expect(asB.statusCode).toBe(200);
    expect(asB.json().deliveries).toEqual([]);

    // A's user name without A's password: the wholesaler refuses, and nothing stored is shown.
    const guessing = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix' },
      credentials: { username: a.username, password: SCENARIO_PASSWORDS.REJECTED },
    });
    expect(guessing.statusCode).toBe(401);
    expect(guessing.json().error).toBe('wholesaler_credentials_rejected');
    expect(guessing.body).not.toContain('tracking_number');

    // The same pharmacy through another account's key sees nothing either.
    const otherAccount = await gw.createKey('test');
    const elsewhere = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix' },
      credentials: a,
      key: otherAccount.secret,
    });
    expect(elsewhere.json().deliveries).toEqual([]);
  });

  it('refuses every delivery endpoint for an MSV3 v1 wholesaler with 422 before calling it', async () => {
    const before = gw.mocks.sandbox.requestCount();
    const requests: GatewayRequest[] = [
      { url: '/v1/deliveries', query: { wholesaler: 'gehe' } },
      { url: '/v1/deliveries/confirm', body: { wholesaler: 'gehe', tracking_numbers: ['LS1'] } },
      { url: '/v1/deliveries/history', query: { wholesaler: 'gehe' } },
      { url: '/v1/deliveries/history', query: { wholesaler: 'gehe', tracking_number: 'LS1' } },
    ];
    for (const request of requests) {
      const response = await gw.inject(request);
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({ error: 'operation_not_supported', wholesaler: 'gehe' });
    }
    expect(gw.mocks.sandbox.requestCount()).toBe(before);
  });

  it('needs the MSV3 headers and valid parameters', async () => {
    const noCredentials = await gw.inject({
      url: '/v1/deliveries',
      query: { wholesaler: 'phoenix' },
      credentials: null,
    });
    expect(noCredentials.statusCode).toBe(400);
    expect(noCredentials.json().error).toBe('wholesaler_credentials_missing');

    const badNumber = await gw.inject({
      url: '/v1/deliveries/confirm',
      body: { wholesaler: 'phoenix', tracking_numbers: ['LS1', 'has space'] },
    });
    expect(badNumber.statusCode).toBe(400);
    expect(badNumber.json().message).toContain('tracking_numbers[1]');

    const unknownWholesaler = await gw.inject({ url: '/v1/deliveries', query: { wholesaler: 'nobody' } });
    expect(unknownWholesaler.statusCode).toBe(404);
  });
});
