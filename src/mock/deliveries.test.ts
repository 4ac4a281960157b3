import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { isBarcodeReferenz, isLieferscheinnummer } from '../msv3/operations/extra-fields.js';
import { lieferavisAbfrageHist } from '../msv3/operations/lieferavis-abfrage-hist.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { lieferavisBestaetigen } from '../msv3/operations/lieferavis-bestaetigen.js';
import { SCENARIO_PZNS, SUBSTITUTE_PZN } from './scenarios.js';
import { CLIENT_ID, orderRequest, type Sandbox, startSandbox, subOrder } from './test-support/sandbox.js';

const S = SCENARIO_PZNS;
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ clock: manualClock() });
});
afterAll(() => sandbox.close());

/** Each test works as its own customer, so notices of other tests do not show up. */
let customerNo = 0;
const freshCustomer = () => `apoLieferavis${++customerNo}`;

const newNotices = (username: string) =>
  sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username });
const confirm = (username: string, deliveryNoteNumbers: string[]) =>
  sandbox.call(lieferavisBestaetigen, { clientSoftwareId: CLIENT_ID, deliveryNoteNumbers }, { username });
const history = (username: string, query: { deliveryNoteNumber?: string; barcodeReference?: string }) =>
  sandbox.call(lieferavisAbfrageHist, { clientSoftwareId: CLIENT_ID, ...query }, { username });

describe('delivery notices created from orders', () => {
  it('one notice per sub-order and tour, with batch, expiry, parcel, sub-order id and a document', async () => {
    const user = freshCustomer();
    const request = orderRequest(
      subOrder([
        ['04114918', 3, 'MaxVerbund'],
        ['01234567', 600, 'MaxVerbund'],
      ]),
    );
    const answer = await sandbox.ok(bestellen, request, { username: user });
    const tours = new Set(
      answer.subOrders[0]!.positions.flatMap((p) => p.parts.flatMap((part) => part.tourId ?? [])),
    );
    const { notices } = await newNotices(user);
    expect(notices.map((n) => n.tour)).toEqual(['Mittagstour', 'Abendtour']);
    expect(notices).toHaveLength(tours.size);
    const [midday] = notices;
    expect(midday).toMatchObject({
      orderType: 'NORMAL',
      orderLabel: 'K1',
      documentDate: '2026-01-05',
      deliveryTime: '2026-01-05T14:00:00+01:00',
      hasShortages: false,
    });
    expect(isLieferscheinnummer(midday!.deliveryNoteNumber)).toBe(true);
    expect(isBarcodeReferenz(midday!.barcodeReference)).toBe(true);
    expect(midday!.documentId).toMatch(/^[0-9a-f-]{36}$/);
    expect(midday!.lines[0]).toMatchObject({
      pzn: '04114918',
      articleName: expect.any(String),
      shortages: [],
    });
    expect(midday!.lines[0]!.delivered).toEqual([
      {
        orderId: request.subOrders[0]!.id,
        quantity: 3,
        parcelNumber: expect.stringMatching(/^WANNE\d{6}$/),
        batch: expect.stringMatching(/^CH\d{6}$/),
        expiryDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      },
    ]);
    // What goes with a tour (Normal and Verbund parts) is split between the two tours' notes.
    const carried = answer.subOrders[0]!.positions[1]!.parts.filter((p) => p.tourId !== undefined);
    const total = notices
      .flatMap((n) => n.lines.filter((l) => l.pzn === '01234567'))
      .flatMap((l) => l.delivered);
    expect(carried.map((p) => p.type)).toEqual(['Normal', 'Verbund']);
    expect(total.map((d) => d.quantity)).toEqual(carried.map((p) => p.quantity));
  });

  it('lists nothing for rejected sub-orders, back orders and unavailable articles', async () => {
    const user = freshCustomer();
    await sandbox.ok(
      bestellen,
      orderRequest(
        subOrder([[S.ORDER_REJECTED.pzn, 1]]),
        subOrder([
          [S.BACK_ORDER.pzn, 1],
          [S.NOT_DELIVERABLE.pzn, 1],
        ]),
      ),
      { username: user },
    );
    expect((await newNotices(user)).notices).toEqual([]);
  });

  it('DELIVERY_SHORTAGE: confirmed in full, but half of it is a Fehlmenge on the notice', async () => {
    const user = freshCustomer();
    const request = orderRequest(
      subOrder([
        [S.DELIVERY_SHORTAGE.pzn, 5],
        ['04114918', 1],
      ]),
    );
    const answer = await sandbox.ok(bestellen, request, { username: user });
    expect(answer.subOrders[0]!.positions[0]!.parts).toMatchObject([{ type: 'Normal', quantity: 5 }]);
    const [notice] = (await newNotices(user)).notices;
    expect(notice?.hasShortages).toBe(true);
    expect(notice?.lines[0]).toMatchObject({
      pzn: S.DELIVERY_SHORTAGE.pzn,
      delivered: [{ quantity: 2 }],
      shortages: [{ orderId: request.subOrders[0]!.id, quantity: 3 }],
    });
    expect(notice?.lines[1]).toMatchObject({ shortages: [] });
  });

  it('a single shortage unit leaves a line with only a Fehlmenge', async () => {
    const user = freshCustomer();
    await sandbox.ok(bestellen, orderRequest(subOrder([[S.DELIVERY_SHORTAGE.pzn, 1]])), { username: user });
    const [notice] = (await newNotices(user)).notices;
    expect(notice?.lines[0]).toMatchObject({ delivered: [], shortages: [{ quantity: 1 }] });
  });

  it('a substituted article is delivered under the successor PZN', async () => {
    const user = freshCustomer();
    await sandbox.ok(bestellen, orderRequest(subOrder([[S.SUBSTITUTION.pzn, 2]])), { username: user });
    const [notice] = (await newNotices(user)).notices;
    expect(notice?.lines.map((l) => l.pzn)).toEqual([SUBSTITUTE_PZN]);
  });

  it('VERSAND lines carry the GebindeId', async () => {
    const user = `${freshCustomer()}versand`;
    await sandbox.ok(
      bestellen,
      orderRequest(
        subOrder([['04114918', 1]], { orderType: 'VERSAND', containerId: 'KISTE7', orderLabel: 'VERSAND1' }),
      ),
      { username: user },
    );
    const [notice] = (await newNotices(user)).notices;
    expect(notice).toMatchObject({
      orderType: 'VERSAND',
      orderLabel: 'VERSAND1',
      lines: [{ containerId: 'KISTE7' }],
    });
  });
});

describe('confirming notices', () => {
  it('a confirmed notice disappears from lieferavisAbfrageNeu; confirming again is harmless', async () => {
    const user = freshCustomer();
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username: user });
    await sandbox.ok(bestellen, orderRequest(subOrder([['01234567', 1]])), { username: user });
    const before = (await newNotices(user)).notices.map((n) => n.deliveryNoteNumber);
    expect(before).toHaveLength(2);
    expect(await confirm(user, [before[0]!])).toMatchObject({ ok: true, value: {} });
    expect((await newNotices(user)).notices.map((n) => n.deliveryNoteNumber)).toEqual([before[1]]);
    expect((await confirm(user, [before[0]!, before[0]!])).ok).toBe(true);
    expect(sandbox.mock.deliveryNotices('test', user).map((n) => n.confirmed)).toEqual([true, false]);
  });

  it('an unknown number is a ValidationFault and nothing of the request is confirmed', async () => {
    const user = freshCustomer();
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username: user });
    const [known] = (await newNotices(user)).notices.map((n) => n.deliveryNoteNumber);
    const result = await confirm(user, [known!, 'LS0000']);
    expect(!result.ok && result.error).toMatchObject({ fault: { kind: 'ValidationFault' } });
    expect(!result.ok && result.error.reason === 'soap_fault' && result.error.fault.technicalText).toContain(
      'LS0000',
    );
    expect((await newNotices(user)).notices).toHaveLength(1);
  });

  it('another customer cannot confirm my notices', async () => {
    const user = freshCustomer();
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username: user });
    const [known] = (await newNotices(user)).notices.map((n) => n.deliveryNoteNumber);
    expect((await confirm(freshCustomer(), [known!])).ok).toBe(false);
  });
});

describe('lieferavisAbfrageHist', () => {
  it('finds a notice by number and by barcode, also after it was confirmed', async () => {
    const user = freshCustomer();
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username: user });
    const [notice] = (await newNotices(user)).notices;
    await confirm(user, [notice!.deliveryNoteNumber]);
    const byNumber = await history(user, { deliveryNoteNumber: notice!.deliveryNoteNumber });
    const byBarcode = await history(user, { barcodeReference: notice!.barcodeReference });
    const byBoth = await history(user, {
      deliveryNoteNumber: notice!.deliveryNoteNumber,
      barcodeReference: notice!.barcodeReference,
    });
    for (const result of [byNumber, byBarcode, byBoth])
      expect(result).toMatchObject({ ok: true, value: { notices: [notice] } });
  });

  it('answers LieferscheinOderBarcodeUnbekanntFaultInfo for an unknown number, barcode or mismatching pair', async () => {
    const user = freshCustomer();
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username: user });
    const [notice] = (await newNotices(user)).notices;
    for (const query of [
      { deliveryNoteNumber: 'LS19990101000001' },
      { barcodeReference: '0#LS19990101000001' },
      { deliveryNoteNumber: notice!.deliveryNoteNumber, barcodeReference: '0#OTHER' },
    ]) {
      const result = await history(user, query);
      expect(!result.ok && result.error).toMatchObject({
        reason: 'soap_fault',
        fault: { kind: 'LieferscheinOderBarcodeUnbekanntFault', errorCode: 'L001' },
      });
    }
  });

  it('answers a query with neither number nor barcode with a ValidationFault', async () => {
    const result = await history(freshCustomer(), {});
    expect(!result.ok && result.error).toMatchObject({ fault: { kind: 'ValidationFault' } });
  });
});
