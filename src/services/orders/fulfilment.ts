import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import type { SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import type { DeliveryNotice } from '../../msv3/operations/lieferavis.js';
import {
  creditFill,
  linesOfSubOrder,
  type OrderCustomer,
  type OrderLineRow,
  openLinesFor,
  orderLinesOf,
} from '../../store/order-lines.js';
import { findOrderById, updateOrder } from '../../store/orders.js';
import type { Tables } from '../../store/schema.js';
import type { EventRecorder } from '../../webhooks/events/record.js';
import { recordOf } from './record.js';

/**
 * What arrived of an order (docs/orders.md "What arrived"): every delivery notice the gateway sees for
 * the first time (deliveries list, history, the sandbox's own notices) is credited to the orders it
 * fulfils, in the transaction that stores it. A part that names its sub-order (`AuftragsID`) goes to
 * that sub-order's line of the PZN (or of the PZN it substitutes). A part without one is matched as
 * MSV3 prints notes: by order type and label (a different label or tour means a different note), and
 * date, to the oldest open lines of the PZN, preferring orders whose answer carries the note's tour;
 * such a credit is marked `inferred`. Once every line of an order is delivered or reported short, the
 * order is fulfilled and `order.fulfilled` is recorded with its record.
 */

export interface FulfilmentDeps {
  clock: Clock;
  recordEvent: EventRecorder;
}

/** How far back a note without sub-order ids looks for the orders it fills. */
const INFERENCE_WINDOW_MS = 14 * 24 * 3_600_000;

interface Credit {
  line: OrderLineRow;
  quantity: number;
  inferred: boolean;
}

export async function creditDeliveryNotice(
  trx: Kysely<Tables>,
  deps: FulfilmentDeps,
  customer: OrderCustomer,
  notice: DeliveryNotice,
): Promise<void> {
  const now = deps.clock.now();
  const touched = new Set<string>();
  for (const [index, line] of notice.lines.entries()) {
    const parts = [
      ...line.delivered.map((part, i) => ({ kind: 'delivered' as const, number: i + 1, ...part })),
      ...line.shortages.map((part, i) => ({ kind: 'short' as const, number: i + 1, ...part })),
    ];
    for (const part of parts) {
      const credits =
        part.orderId !== undefined
          ? await namedCredit(trx, customer, part.orderId, line.pzn, part.quantity)
          : await inferredCredits(trx, customer, notice, line.pzn, part.quantity, now);
      for (const credit of credits) {
        const added = await creditFill(trx, {
          order_id: credit.line.order_id,
          sub_order_id: credit.line.sub_order_id,
          pzn: credit.line.pzn,
          tracking_number: notice.deliveryNoteNumber,
          note_line: index + 1,
          part: part.number,
          kind: part.kind,
          quantity: credit.quantity,
          delivered_pzn: line.pzn,
          batch: 'batch' in part ? (part.batch ?? null) : null,
          expiry_date: 'expiryDate' in part ? (part.expiryDate ?? null) : null,
          parcel_number: 'parcelNumber' in part ? (part.parcelNumber ?? null) : null,
          document_date: notice.documentDate.slice(0, 10),
          inferred: credit.inferred ? 1 : 0,
          recorded_at: now,
        });
        if (added) touched.add(credit.line.order_id);
      }
    }
  }
  for (const orderId of touched) await settleFulfilment(trx, deps, orderId);
}

/** The line of the named sub-order with the PZN, or the one this PZN substitutes. */
async function namedCredit(
  trx: Kysely<Tables>,
  customer: OrderCustomer,
  subOrderId: string,
  pzn: string,
  quantity: number,
): Promise<Credit[]> {
  const lines = await linesOfSubOrder(trx, customer, subOrderId);
  const line = lines.find((l) => l.pzn === pzn) ?? lines.find((l) => l.substitute_pzn === pzn);
  return line === undefined ? [] : [{ line, quantity, inferred: false }];
}

/** The quantity spread over the open lines it most likely fills, oldest order first. */
async function inferredCredits(
  trx: Kysely<Tables>,
  customer: OrderCustomer,
  notice: DeliveryNotice,
  pzn: string,
  quantity: number,
  now: number,
): Promise<Credit[]> {
  const noteDay = Date.parse(`${notice.documentDate.slice(0, 10)}T00:00:00Z`);
  // Placed by now, and before the end of the note's day (German time is at most two hours ahead of UTC).
  const before = Math.min(now, noteDay + 24 * 3_600_000);
  const open = await openLinesFor(trx, customer, {
    orderType: notice.orderType,
    label: notice.orderLabel,
    pzn,
    before,
    after: noteDay - INFERENCE_WINDOW_MS,
  });
  const onTour = new Set<string>();
  if (notice.tour !== undefined) {
    for (const line of open) if (await answerCarriesTour(trx, line, notice.tour)) onTour.add(line.order_id);
  }
  const ranked = [...open].sort((a, b) => Number(onTour.has(b.order_id)) - Number(onTour.has(a.order_id)));
  const credits: Credit[] = [];
  let left = quantity;
  for (const line of ranked) {
    if (left === 0) break;
    const room = (line.quantity_confirmed ?? 0) - line.quantity_delivered - line.quantity_short;
    const take = Math.min(room, left);
    if (take <= 0) continue;
    credits.push({ line, quantity: take, inferred: true });
    left -= take;
  }
  return credits;
}

async function answerCarriesTour(trx: Kysely<Tables>, line: OrderLineRow, tour: string): Promise<boolean> {
  const order = await findOrderById(trx, line.order_id);
  const answer = (order?.answer ?? []) as SubOrderAnswer[];
  const position = answer
    .find((sub) => sub.id === line.sub_order_id)
    ?.positions.find((p) => p.pzn === line.pzn);
  return position?.parts.some((part) => part.tour === tour) ?? false;
}

/** Marks the order fulfilled, with its event, once every line is delivered or reported short. */
async function settleFulfilment(trx: Kysely<Tables>, deps: FulfilmentDeps, orderId: string): Promise<void> {
  const order = await findOrderById(trx, orderId);
  if (order === undefined || order.fulfilledAt !== null) return;
  if (order.placementStatus !== 'confirmed' && order.placementStatus !== 'partially_confirmed') return;
  const lines = await orderLinesOf(trx, orderId);
  const done = lines.every(
    (l) => l.quantity_confirmed !== null && l.quantity_delivered + l.quantity_short >= l.quantity_confirmed,
  );
  if (!done) return;
  const at = deps.clock.now();
  await updateOrder(trx, deps.clock, orderId, { fulfilledAt: at }, at);
  order.fulfilledAt = at;
  order.updatedAt = at;
  await deps.recordEvent(trx, {
    accountId: order.accountId,
    mode: order.mode,
    type: 'order.fulfilled',
    wholesaler: order.wholesaler,
    customerId: order.customerId,
    data: await recordOf(trx, order),
  });
}
