import { randomUUID } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { silentLogger } from '../../../test/logger.js';
import { manualClock } from '../../lib/clock.js';
import type { Msv3Client } from '../../msv3/client.js';
import { createCredentials } from '../../msv3/credentials.js';
import type { OrderRequest } from '../../msv3/operations/bestellen.js';
import type { DeliveryNotice } from '../../msv3/operations/lieferavis.js';
import { createAccount } from '../../store/accounts.js';
import { eventRecorder } from '../../webhooks/events/record.js';
import type { ResolvedWholesaler, WholesalerRegistry } from '../../wholesalers/registry.js';
import { createContractCache } from './contract-check.js';
import { creditDeliveryNotice } from './fulfilment.js';
import { placeOrder } from './placement.js';
import { orderRecord } from './record.js';
import type { OrderDeps } from './state.js';

/**
 * Delivery notices credited to the orders they fill (docs/orders.md "What arrived"): by the sub-order a
 * part names, else inferred by type, label, PZN and date, oldest open line first; each part once, and
 * `order.fulfilled` once every line is delivered or short.
 */

const WHOLESALER: ResolvedWholesaler = {
  id: 'phoenix',
  name: 'PHOENIX',
  version: 2,
  route: 'live',
  endpoint: { target: 'phoenix', baseUrl: 'http://127.0.0.1:9/msv3/v2.0', version: 2 },
  custom: null,
};

/** Every order type agreed, with room for labels of the client's own choosing. */
const CONTRACT = {
  customerId: 'apotheke1',
  orderWindows: [],
  orderTypes: {
    NORMAL: { maxFreeOrderLabels: 5 },
    STAPEL: { maxFreeOrderLabels: 1, agreed: true },
    SONDER: { maxFreeOrderLabels: 1, agreed: true },
    VERSAND: { maxFreeOrderLabels: 1, agreed: true, completeContainersOnly: false },
  },
  substitutionAgreed: true,
  specificAvailabilityAgreed: true,
  bulkAvailabilityAgreed: true,
  takeBackOffersAgreed: true,
  specialDays: [],
};

/** Confirms every position in full, with the next tour `Mittag`; a second sub-order's label replaced. */
function confirm(request: OrderRequest) {
  return {
    ok: true,
    latencyMs: 1,
    status: 200,
    value: {
      id: request.id,
      supportId: request.supportId,
      nightMode: false,
      subOrders: request.subOrders.map((sub, i) => ({
        ...sub,
        orderLabel: i === 1 ? 'T9' : sub.orderLabel,
        positions: sub.positions.map((p) => ({
          pzn: p.pzn,
          quantity: p.quantity,
          deliveryInstruction: p.deliveryInstruction,
          parts: [
            {
              quantity: p.quantity,
              type: 'Normal',
              deliveryTime: '2026-01-05T14:30:00+01:00',
              tour: 'Mittag',
              tourId: 'T1',
              defectReason: 'KeineAngabe',
              tourDeviation: false,
            },
          ],
        })),
      })),
    },
  };
}

describeEachDialect('crediting delivery notices to orders', (getDatabase) => {
  const clock = manualClock(Date.parse('2026-01-05T08:00:00Z'));
  let deps: OrderDeps;
  let accountId: string;
  const customerId = 'apotheke1';
  const credentials = createCredentials(customerId, 'secret');

  beforeEach(async () => {
    const client: Msv3Client = {
      async call(operation, _endpoint, _credentials, request) {
        if (operation.name === 'vertragsdatenAbfragen')
          return { ok: true, latencyMs: 1, value: CONTRACT } as never;
        return confirm(request as OrderRequest) as never;
      },
    };
    const registry: WholesalerRegistry = { list: async () => [], resolve: async () => WHOLESALER };
    deps = {
      upstream: { registry, client, customClient: client, clientSoftwareId: 'test' },
      db: getDatabase().db,
      clock,
      recordEvent: eventRecorder({ clock }),
      log: silentLogger,
      contracts: createContractCache({ clock, ttlMs: 0 }),
      maxPositions: 500,
    };
    accountId = (await createAccount(getDatabase().db, clock, { name: 'Apotheke' })).id;
  });

  const caller = () => ({ accountId, keyId: 'key_1', mode: 'live' as const });
  const customer = () => ({ accountId, mode: 'live', wholesaler: 'phoenix', customerId });
  const place = async (items: { pzn: string; quantity: number }[], label?: string) => {
    clock.advance(60_000);
    return placeOrder(deps, caller(), credentials, {
      wholesaler: 'phoenix',
      items,
      ...(label === undefined ? {} : { order_label: label }),
    });
  };
  const credit = (notice: DeliveryNotice) =>
    getDatabase()
      .db.transaction()
      .execute((trx) => creditDeliveryNotice(trx, deps, customer(), notice));
  const note = (number: string, lines: DeliveryNotice['lines'], label = 'K1'): DeliveryNotice => ({
    deliveryNoteNumber: number,
    barcodeReference: `0#${number}`,
    orderType: 'NORMAL',
    orderLabel: label,
    documentDate: '2026-01-05',
    tour: 'Mittag',
    hasShortages: lines.some((l) => l.shortages.length > 0),
    lines,
  });
  const fulfilledEvents = async () =>
    (
      await getDatabase()
        .db.selectFrom('webhook_events')
        .select('payload')
        .where('type', '=', 'order.fulfilled')
        .where('account_id', '=', accountId)
        .execute()
    ).map((row) => JSON.parse(row.payload).data.order_id as string);

  it('credits a part to the sub-order it names, once, and announces the order fulfilled once', async () => {
    const order = await place([{ pzn: '04114918', quantity: 3 }]);
    const subOrderId = order.sub_orders[0]!.sub_order_id;
    const notice = note(`LS-${randomUUID().slice(0, 8)}`, [
      {
        pzn: '04114918',
        delivered: [{ orderId: subOrderId, quantity: 2, batch: 'CH-1', expiryDate: '2027-11-30' }],
        shortages: [{ orderId: subOrderId, quantity: 1 }],
      },
    ]);
    await credit(notice);
    await credit(notice);
    const record = await orderRecord(getDatabase().db, caller(), order.order_id!);
    expect(record.sub_orders[0]!.items[0]).toMatchObject({
      quantity_delivered: 2,
      quantity_short: 1,
      tracking_numbers: [notice.deliveryNoteNumber],
      delivered: [{ quantity: 2, batch: 'CH-1', expiry_date: '2027-11-30', inferred: false }],
    });
    expect(record.fulfilment).toMatchObject({ status: 'fulfilled' });
    expect(await fulfilledEvents()).toEqual([order.order_id]);
  });

  it('announces the fulfilled order with the record as stored, even when the clock moves meanwhile', async () => {
    const order = await place([{ pzn: '04114918', quantity: 1 }]);
    const subOrderId = order.sub_orders[0]!.sub_order_id;
    // Every reading of this clock is a millisecond later: two readings for one change would differ.
    const ticking = {
      now: () => {
        clock.advance(1);
        return clock.now();
      },
    };
    await getDatabase()
      .db.transaction()
      .execute((trx) =>
        creditDeliveryNotice(trx, { ...deps, clock: ticking }, customer(), {
          ...note(`LS-${randomUUID().slice(0, 8)}`, [
            { pzn: '04114918', delivered: [{ orderId: subOrderId, quantity: 1 }], shortages: [] },
          ]),
        }),
      );
    const [event] = await getDatabase()
      .db.selectFrom('webhook_events')
      .select('payload')
      .where('type', '=', 'order.fulfilled')
      .where('account_id', '=', accountId)
      .execute();
    expect(JSON.parse(event!.payload).data).toEqual(
      await orderRecord(getDatabase().db, caller(), order.order_id!),
    );
  });

  it('infers the order of a part without sub-order id by type, returned label and PZN, oldest first', async () => {
    const first = await place([{ pzn: '04114918', quantity: 2 }]);
    const second = await place([{ pzn: '04114918', quantity: 3 }]);
    const other = await place([{ pzn: '04114918', quantity: 5 }], 'KUEHL');
    // 4 units without AuftragsID: 2 fill the older order, 2 go to the next.
    await credit(
      note(`LS-${randomUUID().slice(0, 8)}`, [
        { pzn: '04114918', delivered: [{ quantity: 4 }], shortages: [] },
      ]),
    );
    const delivered = async (orderId: string) =>
      (await orderRecord(getDatabase().db, caller(), orderId)).sub_orders[0]!.items[0]!;
    expect(await delivered(first.order_id!)).toMatchObject({
      quantity_delivered: 2,
      delivered: [{ quantity: 2, inferred: true }],
    });
    expect(await delivered(second.order_id!)).toMatchObject({ quantity_delivered: 2 });
    expect(await delivered(other.order_id!)).toMatchObject({ quantity_delivered: 0 });
    expect(await fulfilledEvents()).toEqual([first.order_id]);
    // A note printed with the other label fills the other order.
    await credit(
      note(
        `LS-${randomUUID().slice(0, 8)}`,
        [{ pzn: '04114918', delivered: [{ quantity: 5 }], shortages: [] }],
        'KUEHL',
      ),
    );
    expect(await delivered(other.order_id!)).toMatchObject({ quantity_delivered: 5 });
  });

  it('matches the label the wholesaler returned, and leaves notes of nobody’s order alone', async () => {
    const order = await placeOrder(deps, caller(), credentials, {
      wholesaler: 'phoenix',
      sub_orders: [
        { items: [{ pzn: '04114918', quantity: 1 }] },
        { order_label: 'EILIG', items: [{ pzn: '01234562', quantity: 2 }] },
      ],
    });
    expect(order.sub_orders[1]!.order_label).toBe('T9');
    await credit(
      note(
        `LS-${randomUUID().slice(0, 8)}`,
        [{ pzn: '01234562', delivered: [{ quantity: 2 }], shortages: [] }],
        'T9',
      ),
    );
    await credit(
      note(`LS-${randomUUID().slice(0, 8)}`, [
        { pzn: '09990010', delivered: [{ quantity: 7 }], shortages: [] },
      ]),
    );
    const record = await orderRecord(getDatabase().db, caller(), order.order_id!);
    expect(record.sub_orders[1]!.items[0]).toMatchObject({
      quantity_delivered: 2,
      delivered: [{ inferred: true }],
    });
    expect(record.sub_orders[0]!.items[0]).toMatchObject({ quantity_delivered: 0 });
    expect(record.fulfilment.status).toBe('open');
  });
});
