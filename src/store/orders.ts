import type { Kysely, Selectable } from 'kysely';
import type { Tenant } from '../core/caller.js';
import type { KeyMode } from '../core/key-mode.js';
import type { Clock } from '../lib/clock.js';
import type { OrderState, OrdersTable } from './orders-table.js';
import type { Tables } from './schema.js';

export type { OrderState } from './orders-table.js';

/**
 * The order mapping: gateway order id → MSV3 Bestellung Id, account, mode, wholesaler, customer. The
 * request and answer are JSON owned by the order service (`services/orders-*.ts`); this module only
 * stores them.
 */
export interface StoredOrder {
  id: string;
  accountId: string;
  mode: KeyMode;
  wholesaler: string;
  customerId: string;
  bestellungId: string;
  state: OrderState;
  request: unknown;
  answer: unknown;
  lastStatus: string | null;
  /** The placement status clients see; null only for a row that was never settled or changed. */
  placementStatus: string | null;
  fulfilledAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type NewOrder = Pick<
  StoredOrder,
  'id' | 'accountId' | 'mode' | 'wholesaler' | 'customerId' | 'bestellungId' | 'request'
>;

/**
 * Stores the order in state `sending`, unless an order with this id exists already (a retry of the same
 * request): then that one is returned unchanged. Either way the caller gets what is stored. One statement
 * when the order is new (`returning`): an insert that committed and a read that then failed would leave
 * the caller unsure whether the row exists.
 */
export async function insertOrderIfAbsent(
  db: Kysely<Tables>,
  clock: Clock,
  order: NewOrder,
): Promise<{ order: StoredOrder; created: boolean }> {
  const now = clock.now();
  const inserted = await db
    .insertInto('orders')
    .values({
      id: order.id,
      account_id: order.accountId,
      mode: order.mode,
      wholesaler: order.wholesaler,
      customer_id: order.customerId,
      bestellung_id: order.bestellungId,
      state: 'sending',
      request: JSON.stringify(order.request),
      answer: null,
      last_status: null,
      placement_status: 'outcome_unknown',
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted !== undefined) return { order: toStoredOrder(inserted), created: true };
  const stored = await findOrderById(db, order.id);
  if (stored === undefined) throw new Error(`order ${order.id} vanished after insert`);
  return { order: stored, created: false };
}

/** Removes an order still `sending` that was never sent (its insert failed to answer; no key to resume it). */
export async function deleteUnsentOrder(db: Kysely<Tables>, id: string): Promise<void> {
  await db.deleteFrom('orders').where('id', '=', id).where('state', '=', 'sending').execute();
}

/** The order with this gateway id, whoever owns it; callers check ownership (`findOwnOrder`). */
export async function findOrderById(db: Kysely<Tables>, id: string): Promise<StoredOrder | undefined> {
  const row = await db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toStoredOrder(row);
}

/** The order, only if it belongs to this account, mode, wholesaler and MSV3 customer. */
export async function findOwnOrder(
  db: Kysely<Tables>,
  customer: Tenant & { wholesaler: string; customerId: string },
  id: string,
): Promise<StoredOrder | undefined> {
  const row = await db
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', customer.accountId)
    .where('mode', '=', customer.mode)
    .where('wholesaler', '=', customer.wholesaler)
    .where('customer_id', '=', customer.customerId)
    .executeTakeFirst();
  return row === undefined ? undefined : toStoredOrder(row);
}

export interface OrderChange {
  state?: OrderState;
  answer?: unknown;
  lastStatus?: string | null;
  placementStatus?: string;
  fulfilledAt?: number;
}

/** Applies the change; pass a transaction to write it together with its webhook event. */
export async function updateOrder(
  db: Kysely<Tables>,
  clock: Clock,
  id: string,
  change: OrderChange,
  // One instant for a change that writes a time of its own (fulfilled_at) and for updated_at.
  at: number = clock.now(),
): Promise<void> {
  await db
    .updateTable('orders')
    .set({
      ...(change.state === undefined ? {} : { state: change.state }),
      ...(change.answer === undefined ? {} : { answer: JSON.stringify(change.answer) }),
      ...(change.lastStatus === undefined ? {} : { last_status: change.lastStatus }),
      ...(change.placementStatus === undefined ? {} : { placement_status: change.placementStatus }),
      ...(change.fulfilledAt === undefined ? {} : { fulfilled_at: change.fulfilledAt }),
      updated_at: at,
    })
    .where('id', '=', id)
    .execute();
}

export function toStoredOrder(row: Selectable<OrdersTable>): StoredOrder {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    wholesaler: row.wholesaler,
    customerId: row.customer_id,
    bestellungId: row.bestellung_id,
    state: row.state,
    request: JSON.parse(row.request) as unknown,
    answer: row.answer === null ? null : (JSON.parse(row.answer) as unknown),
    lastStatus: row.last_status,
    placementStatus: row.placement_status,
    fulfilledAt: row.fulfilled_at === null ? null : Number(row.fulfilled_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
