import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway, TEST_CATALOGUE } from '../../../test/gateway.js';
import {
  type InterceptingWholesaler,
  startInterceptingWholesaler,
} from '../../../test/intercepting-wholesaler.js';
import { placeSandboxOrder } from '../../../test/sandbox-orders.js';
import { SCENARIO_PZNS } from '../../mock/scenarios.js';
import { parseCatalogue } from '../../wholesalers/catalogue.js';

/**
 * Binding returns calls (`retourenavisAnkuendigen`, `ruecknahmeangebotAnfordern`) whose answer is lost after
 * the request was sent: the key stays open, the retry with the same key sends the same MSV3 id, and the
 * wholesaler (here the sandbox mock) answers it from its records instead of booking a second time.
 */
describeEachDialect('returns: a lost answer and the retry with the same Idempotency-Key', (getDatabase) => {
  let gw: Gateway;
  // `hollow_test`: the mock test server behind a loopback proxy that can rewrite an answer.
  let hollow: InterceptingWholesaler;
  beforeAll(async () => {
    hollow = await startInterceptingWholesaler();
    gw = await startGateway({
      database: getDatabase(),
      // A late answer (LATE_ANSWER) arrives after the headers timeout, without waiting 30 s.
      env: { UPSTREAM_HEADERS_TIMEOUT_MS: '400' },
      mockOptions: { sandbox: { lateAnswerMs: 1_500 } },
      catalogue: (mocks, closedPortUrl) => {
        hollow.target = mocks.testServer.url;
        const path = mocks.testServer
          .baseUrl({ tenant: 'test/hollow', version: 2 })
          .slice(mocks.testServer.url.length);
        return [
          ...TEST_CATALOGUE(mocks, closedPortUrl),
          ...parseCatalogue({
            wholesalers: [
              { id: 'hollow', name: 'Hollow', version: 2, test: { baseUrl: `${hollow.url}${path}` } },
            ],
          }),
        ];
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await hollow.close();
  });

  let pharmacies = 0;
  const newPharmacy = () => ({ username: `lost${++pharmacies}`, password: 'pw-for-tests' });

  /** A pharmacy with one delivered note for 3 units of 04114918; returns its number. */
  async function pharmacyWithDelivery() {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 3 }], { credentials: pharmacy });
    const tracking = gw.mocks.sandbox.deliveryNotices(gw.sandboxTenant('phoenix'), pharmacy.username)[0]!
      .notice.deliveryNoteNumber;
    return { pharmacy, tracking };
  }

  /** The verdict of a non-binding enquiry for `quantity` units: shows how many units are already booked. */
  async function verdictFor(
    pharmacy: { username: string; password: string },
    tracking: string,
    quantity: number,
  ) {
    const response = await gw.inject({
      url: '/v1/returns',
      body: {
        wholesaler: 'phoenix',
        items: [{ tracking_number: tracking, pzn: '4114918', quantity, reason: 'damaged' }],
      },
      credentials: pharmacy,
    });
    expect(response.statusCode).toBe(200);
    return response.json().items[0].verdict as string;
  }

  async function announceTwiceAfterLostAnswer(scenarioPzn: string) {
    const { pharmacy, tracking } = await pharmacyWithDelivery();
    const request = {
      url: '/v1/returns/announce',
      body: {
        wholesaler: 'phoenix',
        items: [
          { tracking_number: tracking, pzn: '4114918', quantity: 1, reason: 'damaged' },
          // Not on the note (its portion is refused), but it triggers the transport scenario.
          { tracking_number: tracking, pzn: scenarioPzn, quantity: 1, reason: 'damaged' },
        ],
      },
      credentials: pharmacy,
      headers: { 'idempotency-key': `lost-${pharmacy.username}` },
    };
    const sentBefore = gw.mocks.sandbox.requestCount('retourenavisAnkuendigen');
    const first = await gw.inject(request);
    const started = performance.now();
    const retry = await gw.inject(request);
    const retryMs = performance.now() - started;
    // Both attempts reached the wholesaler.
    expect(gw.mocks.sandbox.requestCount('retourenavisAnkuendigen')).toBe(sentBefore + 2);
    return { pharmacy, tracking, request, first, retry, retryMs };
  }

  function expectOutcomeUnknown(first: Awaited<ReturnType<Gateway['inject']>>, returnId: string) {
    expect(first.statusCode).toBe(504);
    const body = first.json();
    expect(body).toMatchObject({
      error: 'return_outcome_unknown',
      error_code: '1506',
      wholesaler: 'phoenix',
    });
    expect(body.message).toContain('same Idempotency-Key');
    // The message names the announcement id the retry sends again.
    expect(body.message).toContain(returnId);
  }

  it('resends the same announcement id after a dropped connection, so the return is booked once', async () => {
    const { pharmacy, tracking, request, first, retry } = await announceTwiceAfterLostAnswer(
      SCENARIO_PZNS.CONNECTION_DROP.pzn,
    );
    expect(retry.statusCode).toBe(200);
    const announcement = retry.json();
    expect(announcement.portions.find((p: { accepted: boolean }) => p.accepted)).toMatchObject({
      verdict: 'accepted',
      reference: expect.any(String),
      items: [{ pzn: '04114918', quantity: 1 }],
    });
    expectOutcomeUnknown(first, announcement.return_id);

    // 1 of 3 units booked: 2 more are still accepted (booked twice, they would exceed the delivery).
    expect(await verdictFor(pharmacy, tracking, 2)).toBe('accepted');
    expect(await verdictFor(pharmacy, tracking, 3)).toBe('quantity_exceeds_delivery');

    // Settled now: the same key replays the announcement without calling the wholesaler.
    const sent = gw.mocks.sandbox.requestCount('retourenavisAnkuendigen');
    const replay = await gw.inject(request);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(announcement);
    expect(gw.mocks.sandbox.requestCount('retourenavisAnkuendigen')).toBe(sent);
  });

  it('resends the same announcement id after a timeout and gets the booked answer at once', async () => {
    const { pharmacy, tracking, first, retry, retryMs } = await announceTwiceAfterLostAnswer(
      SCENARIO_PZNS.LATE_ANSWER.pzn,
    );
    expect(retry.statusCode).toBe(200);
    const announcement = retry.json();
    expectOutcomeUnknown(first, announcement.return_id);
    // Answered from the wholesaler's records, not held back like the first (late) answer.
    expect(retryMs).toBeLessThan(1_000);
    expect(await verdictFor(pharmacy, tracking, 2)).toBe('accepted');
    expect(await verdictFor(pharmacy, tracking, 3)).toBe('quantity_exceeds_delivery');
  });

  it('says not to resend an announcement without a key whose answer was lost', async () => {
    const { pharmacy, tracking } = await pharmacyWithDelivery();
    const response = await gw.inject({
      url: '/v1/returns/announce',
      body: {
        wholesaler: 'phoenix',
        items: [
          {
            tracking_number: tracking,
            pzn: SCENARIO_PZNS.CONNECTION_DROP.pzn,
            quantity: 1,
            reason: 'damaged',
          },
        ],
      },
      credentials: pharmacy,
    });
    expect(response.statusCode).toBe(504);
    expect(response.json()).toMatchObject({ error: 'return_outcome_unknown' });
    expect(response.json().message).toContain('Do not send it again without an Idempotency-Key');
  });

  it('answers an announcement answered without a result with 504 return_outcome_unknown, and keeps the key bound', async () => {
    const pharmacy = newPharmacy();
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 3 }], {
      credentials: pharmacy,
      wholesaler: 'hollow_test',
    });
    const tracking = gw.mocks.testServer.deliveryNotices('test/hollow', pharmacy.username)[0]!.notice
      .deliveryNoteNumber;
    const request = (quantity: number) => ({
      url: '/v1/returns/announce',
      body: {
        wholesaler: 'hollow_test',
        items: [{ tracking_number: tracking, pzn: '4114918', quantity, reason: 'damaged' }],
      },
      credentials: pharmacy,
      headers: { 'idempotency-key': `hollow-${pharmacy.username}` },
    });
    // The wholesaler books it, but its answer comes without the optional `return` element.
    hollow.interceptNext('retourenavisAnkuendigen', {
      answer: (soap) => soap.replace(/<return\b[\s\S]*<\/return>/, ''),
    });
    const first = await gw.inject(request(1));
    expect(first.statusCode).toBe(504);
    expect(first.json()).toMatchObject({ error: 'return_outcome_unknown', wholesaler: 'hollow_test' });
    expect(first.json().message).toContain('the answer carried no result');
    expect(first.json().message).toContain('same Idempotency-Key');

    // Bound to its request (released, the key would start a second announcement with a new id).
    const corrected = await gw.inject(request(2));
    expect(corrected.statusCode).toBe(422);
    expect(corrected.json()).toMatchObject({ error: 'idempotency_key_reused' });
    const retry = await gw.inject(request(1));
    expect(retry.statusCode).toBe(200);
    expect(first.json().message).toContain(retry.json().return_id);
    expect(hollow.count('retourenavisAnkuendigen', retry.json().return_id)).toBe(2);
  });

  it('releases the key when the announcement never reached the wholesaler', async () => {
    // `offline`'s live server is a closed port: the connection is refused before anything is sent.
    const item = { tracking_number: 'LS-1', pzn: '4114918', quantity: 1, reason: 'damaged' };
    const request = (quantity: number) => ({
      url: '/v1/returns/announce',
      key: 'live' as const,
      body: { wholesaler: 'offline', items: [{ ...item, quantity }] },
      headers: { 'idempotency-key': 'lost-refused' },
    });
    const first = await gw.inject(request(1));
    expect(first.statusCode).toBe(502);
    expect(first.json()).toMatchObject({ error: 'wholesaler_unreachable' });
    expect(first.json().message).toContain('could not be reached');
    // Released: the key is free for a corrected request (kept open, this would be 422 idempotency_key_reused).
    const corrected = await gw.inject(request(2));
    expect(corrected.statusCode).toBe(502);
    expect(corrected.json()).toMatchObject({ error: 'wholesaler_unreachable' });
  });

  it('resends the same take-back offer id after a dropped connection, so the offer is taken once', async () => {
    const pharmacy = newPharmacy();
    const offer = (items: { pzn: string; quantity: number }[], key: string) => ({
      url: '/v1/returns/offers',
      body: { wholesaler: 'phoenix', items },
      credentials: pharmacy,
      headers: { 'idempotency-key': key },
    });
    const request = offer(
      [
        { pzn: '4114918', quantity: 2 },
        { pzn: SCENARIO_PZNS.CONNECTION_DROP.pzn, quantity: 1 },
      ],
      `lost-offer-${pharmacy.username}`,
    );
    const first = await gw.inject(request);
    const retry = await gw.inject(request);
    expect(retry.statusCode).toBe(200);
    const { offer_id, reference_id } = retry.json();
    expect(first.statusCode).toBe(504);
    expect(first.json()).toMatchObject({ error: 'return_outcome_unknown' });
    expect(first.json().message).toContain(offer_id);

    // The wholesaler numbers its references: the next offer gets the very next one, so none was taken twice.
    const next = await gw.inject(offer([{ pzn: '4114918', quantity: 1 }], `next-${pharmacy.username}`));
    const number = (reference: string) => Number(reference.split('-').at(-1));
    expect(number(next.json().reference_id)).toBe(number(reference_id) + 1);
  });

  it("answers a fault after sending with the wholesaler's error, and keeps the key bound to the request", async () => {
    const { pharmacy, tracking } = await pharmacyWithDelivery();
    const item = { tracking_number: tracking, pzn: '4114918', quantity: 1, reason: 'damaged' };
    const key = { 'idempotency-key': `fault-${pharmacy.username}` };
    const faulted = await gw.inject({
      url: '/v1/returns/announce',
      body: {
        wholesaler: 'phoenix',
        items: [item, { ...item, pzn: SCENARIO_PZNS.SERVER_FAULT.pzn }],
      },
      credentials: pharmacy,
      headers: key,
    });
    expect(faulted.statusCode).toBe(502);
    expect(faulted.json()).toMatchObject({ error: 'wholesaler_fault', wholesaler: 'phoenix' });
    expect(faulted.json().message).toContain('may have been booked all the same');
    // The key belongs to the faulted request: a different body with it is refused, not sent.
    const corrected = await gw.inject({
      url: '/v1/returns/announce',
      body: { wholesaler: 'phoenix', items: [item] },
      credentials: pharmacy,
      headers: key,
    });
    expect(corrected.statusCode).toBe(422);
    expect(corrected.json()).toMatchObject({ error: 'idempotency_key_reused' });
  });
});
