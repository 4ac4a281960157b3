import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import { placeSandboxOrder } from '../../../test/sandbox-orders.js';
import { SCENARIO_PZNS } from '../../mock/index.js';

describeEachDialect('return endpoints', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  let pharmacies = 0;
  const newPharmacy = (marker = '') => ({
    username: `ret${++pharmacies}${marker}`,
    password: 'pw-for-tests',
  });

  /** A pharmacy with one delivered note for 3 units of 04114918; returns its number. */
  async function pharmacyWithDelivery() {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 3 }], { credentials: pharmacy });
    const tracking = gw.mocks.sandbox.deliveryNotices(gw.sandboxTenant('phoenix'), pharmacy.username)[0]!
      .notice.deliveryNoteNumber;
    return { pharmacy, tracking };
  }

  it('refuses a PZN with a wrong check digit on every return endpoint, naming the item, and sends nothing', async () => {
    const before = gw.mocks.sandbox.requestCount();
    const item = { tracking_number: 'LS-2025-000123', quantity: 1, reason: 'damaged' };
    const bodies: [string, unknown][] = [
      [
        '/v1/returns',
        {
          wholesaler: 'phoenix',
          items: [
            { ...item, pzn: '4114918' },
            { ...item, pzn: '4114917' },
          ],
        },
      ],
      ['/v1/returns/announce', { wholesaler: 'phoenix', items: [{ ...item, pzn: '04114917' }] }],
      [
        '/v1/returns/offers',
        {
          wholesaler: 'phoenix',
          items: [
            { pzn: '4114918', quantity: 1 },
            { pzn: '4114917', quantity: 1 },
          ],
        },
      ],
    ];
    for (const [url, body] of bodies) {
      const response = await gw.inject({ url, body, credentials: newPharmacy() });
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toMatchObject({
        error: 'invalid_request',
        param: url === '/v1/returns/announce' ? 'items[0].pzn' : 'items[1].pzn',
        message: expect.stringContaining(
          '04114917 has a wrong check digit: a PZN starting with 0411491 ends in 8',
        ),
      });
    }
    expect(gw.mocks.sandbox.requestCount()).toBe(before);
  });

  it('answers an enquiry with a verdict per item, by position', async () => {
    const { pharmacy, tracking } = await pharmacyWithDelivery();
    const response = await gw.inject({
      url: '/v1/returns',
      body: {
        wholesaler: 'phoenix',
        items: [
          {
            tracking_number: tracking,
            pzn: '4114918',
            quantity: 1,
            reason: 'damaged',
            batch: 'B1',
            expiry_date: '2027-01-31',
          },
          { tracking_number: tracking, pzn: '1234562', quantity: 1, reason: 'over_delivered' },
          { tracking_number: 'LS-UNKNOWN', pzn: '4114918', quantity: 1, reason: 'order_error' },
          { tracking_number: tracking, pzn: '4114918', quantity: 9, reason: 'order_error' },
        ],
      },
      credentials: pharmacy,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      wholesaler: 'phoenix',
      return_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(body.support_id).toBeGreaterThan(0);
    expect(body.items[0]).toEqual({
      position: 1,
      tracking_number: tracking,
      pzn: '04114918',
      quantity: 1,
      reason: 'damaged',
      batch: 'B1',
      expiry_date: '2027-01-31',
      verdict: 'accepted',
      accepted: true,
    });
    expect(body.items.map((i: { verdict: string; accepted: boolean }) => [i.verdict, i.accepted])).toEqual([
      ['accepted', true],
      ['pzn_not_on_delivery_note', false],
      ['delivery_note_unknown', false],
      ['quantity_exceeds_delivery', false],
    ]);
  });

  it('announces a return in portions with reference, pick-up and a printable slip', async () => {
    const { pharmacy, tracking } = await pharmacyWithDelivery();
    const response = await gw.inject({
      url: '/v1/returns/announce',
      body: {
        wholesaler: 'phoenix',
        items: [
          { tracking_number: tracking, pzn: '4114918', quantity: 2, reason: 'damaged' },
          { tracking_number: tracking, pzn: '1234562', quantity: 1, reason: 'damaged' },
        ],
        company: { vat_id: 'DE123456789' },
      },
      credentials: pharmacy,
    });
    expect(response.statusCode).toBe(200);
    const { portions } = response.json();
    const accepted = portions.find((p: { accepted: boolean }) => p.accepted);
    const refused = portions.find((p: { accepted: boolean }) => !p.accepted);
    expect(accepted).toMatchObject({
      verdict: 'accepted',
      reference: expect.any(String),
      document_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      pickup_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
      items: [{ position: 1, pzn: '04114918', quantity: 2, reason: 'damaged' }],
    });
    expect(refused).toMatchObject({
      verdict: 'pzn_not_on_delivery_note',
      reference: null,
      items: [{ position: 2 }],
    });

    const slip = await gw.inject({
      url: `/v1/documents/${accepted.document_id}`,
      query: { wholesaler: 'phoenix' },
      credentials: pharmacy,
    });
    expect(slip.statusCode).toBe(200);
    expect(slip.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');

    // Binding: the 2 announced units are booked, so 2 more of the 3 delivered are too many.
    const again = await gw.inject({
      url: '/v1/returns',
      body: {
        wholesaler: 'phoenix',
        items: [{ tracking_number: tracking, pzn: '4114918', quantity: 2, reason: 'damaged' }],
      },
      credentials: pharmacy,
    });
    expect(again.json().items[0].verdict).toBe('quantity_exceeds_delivery');
  });

  it('accepts back only delivered units, not the shortage (Fehlmenge) of the line, except as not_delivered', async () => {
    // The shortage scenario: 2 ordered, 1 delivered, 1 reported as Fehlmenge on the same note.
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, quantity: 2 }], {
      credentials: pharmacy,
    });
    const tracking = gw.mocks.sandbox.deliveryNotices(gw.sandboxTenant('phoenix'), pharmacy.username)[0]!
      .notice.deliveryNoteNumber;
    const item = (quantity: number, reason = 'damaged') => ({
      tracking_number: tracking,
      pzn: SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn,
      quantity,
      reason,
    });
    const returns = (url: string, items: ReturnType<typeof item>[]) =>
      gw.inject({ url, body: { wholesaler: 'phoenix', items }, credentials: pharmacy });

    const enquiry = await returns('/v1/returns', [item(2)]);
    expect(enquiry.statusCode).toBe(200);
    expect(enquiry.json().items.map((i: { verdict: string }) => i.verdict)).toEqual([
      'quantity_exceeds_delivery',
    ]);
    const claim = await returns('/v1/returns', [item(2, 'not_delivered'), item(3, 'not_delivered')]);
    expect(claim.json().items.map((i: { verdict: string }) => i.verdict)).toEqual([
      'accepted_no_shipment_needed',
      'quantity_exceeds_delivery',
    ]);

    const announced = await returns('/v1/returns/announce', [item(2)]);
    expect(announced.statusCode).toBe(200);
    expect(announced.json().portions).toEqual([
      expect.objectContaining({ verdict: 'quantity_exceeds_delivery', accepted: false, reference: null }),
    ]);
    const one = await returns('/v1/returns/announce', [item(1)]);
    expect(one.json().portions).toEqual([
      expect.objectContaining({ verdict: 'accepted', reference: expect.any(String) }),
    ]);
    // The delivered unit is booked; only the not-delivered claim for the shortage unit is left.
    const left = await returns('/v1/returns', [item(1), item(1, 'not_delivered')]);
    expect(left.json().items.map((i: { verdict: string }) => i.verdict)).toEqual([
      'quantity_exceeds_delivery',
      'accepted_no_shipment_needed',
    ]);
  });

  it('replays an announcement sent again with the same Idempotency-Key instead of announcing twice', async () => {
    const { pharmacy, tracking } = await pharmacyWithDelivery();
    const request = {
      url: '/v1/returns/announce',
      body: {
        wholesaler: 'phoenix',
        items: [{ tracking_number: tracking, pzn: '4114918', quantity: 1, reason: 'damaged' }],
      },
      credentials: pharmacy,
      headers: { 'idempotency-key': `announce-${pharmacy.username}` },
    };
    const before = gw.mocks.sandbox.requestCount('retourenavisAnkuendigen');
    const first = await gw.inject(request);
    const second = await gw.inject(request);
    expect(first.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect(gw.mocks.sandbox.requestCount('retourenavisAnkuendigen')).toBe(before + 1);
  });

  it('requests a take-back offer and returns the wholesaler’s reference, for v1 and v2', async () => {
    for (const wholesaler of ['phoenix', 'gehe']) {
      const response = await gw.inject({
        url: '/v1/returns/offers',
        body: {
          wholesaler,
          items: [
            { pzn: '4114918', quantity: 5 },
            { pzn: '1234562', quantity: 2 },
          ],
        },
        credentials: newPharmacy(),
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        wholesaler,
        offer_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        reference_id: expect.any(String),
        items: [
          { pzn: '04114918', quantity: 5 },
          { pzn: '01234562', quantity: 2 },
        ],
      });
    }
  });

  it('refuses a take-back offer with 403 when the contract does not include it', async () => {
    const response = await gw.inject({
      url: '/v1/returns/offers',
      body: { wholesaler: 'phoenix', items: [{ pzn: '4114918', quantity: 1 }] },
      credentials: newPharmacy('noreturns'),
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({
      error: 'wholesaler_function_not_agreed',
      upstream: { kind: 'AuthorizationFault' },
    });
  });

  it('names the repeated PZN or the too-large v1 quantity of an offer, without calling the wholesaler', async () => {
    const before = gw.mocks.sandbox.requestCount('ruecknahmeangebotAnfordern');
    const duplicate = await gw.inject({
      url: '/v1/returns/offers',
      body: {
        wholesaler: 'phoenix',
        items: [
          { pzn: '04114918', quantity: 1 },
          { pzn: '4114918', quantity: 2 },
        ],
      },
    });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.json()).toMatchObject({ error: 'invalid_request', param: 'items[1].pzn' });
    const tooMany = await gw.inject({
      url: '/v1/returns/offers',
      body: { wholesaler: 'gehe', items: [{ pzn: '4114918', quantity: 10_000 }] },
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toMatchObject({ param: 'items[0].quantity' });
    expect(gw.mocks.sandbox.requestCount('ruecknahmeangebotAnfordern')).toBe(before);
  });

  it('refuses returns for an MSV3 v1 wholesaler with 422 and validates items', async () => {
    const item = { tracking_number: 'LS1', pzn: '4114918', quantity: 1, reason: 'damaged' };
    for (const url of ['/v1/returns', '/v1/returns/announce']) {
      const response = await gw.inject({ url, body: { wholesaler: 'gehe', items: [item] } });
      expect(response.statusCode).toBe(422);
      expect(response.json().error).toBe('operation_not_supported');
    }
    const badReason = await gw.inject({
      url: '/v1/returns',
      body: { wholesaler: 'phoenix', items: [item, { ...item, reason: 'broken' }] },
    });
    expect(badReason.statusCode).toBe(400);
    expect(badReason.json().message).toContain('items[1].reason');
  });
});
