import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { randomToken } from '../lib/ids.js';
import { createAccount } from './accounts.js';
import { findOrderById, findOwnOrder, insertOrderIfAbsent, type NewOrder, updateOrder } from './orders.js';

describeEachDialect('orders repository', (getDatabase) => {
  const clock = manualClock();

  async function newOrder(overrides: Partial<NewOrder> = {}): Promise<NewOrder> {
    const accountId =
      overrides.accountId ?? (await createAccount(getDatabase().db, clock, { name: 'Apotheke' })).id;
    const bestellungId = overrides.bestellungId ?? randomToken(22);
    return {
      id: `GW-${bestellungId}`,
      accountId,
      mode: 'test',
      wholesaler: 'phoenix_test',
      customerId: 'PLA\\apotheke1',
      bestellungId,
      request: { bestellung: { id: bestellungId }, lines: [{ pzn: '04114918', quantity: 2 }] },
      ...overrides,
    };
  }

  const ownerOf = (order: NewOrder) => ({
    accountId: order.accountId,
    mode: order.mode,
    wholesaler: order.wholesaler,
    customerId: order.customerId,
  });

  it('stores a new order in state sending with the request as JSON and the clock time', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    const { order: stored, created } = await insertOrderIfAbsent(db, clock, order);
    expect(created).toBe(true);
    expect(stored).toEqual({
      ...order,
      state: 'sending',
      answer: null,
      lastStatus: null,
      placementStatus: 'outcome_unknown',
      fulfilledAt: null,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    });
    expect(await findOrderById(db, order.id)).toEqual(stored);
  });

  it('returns the stored order unchanged when the same id is inserted again', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    const first = await insertOrderIfAbsent(db, clock, order);
    await updateOrder(db, clock, order.id, { state: 'confirmed', answer: [{ ok: true }] });
    const confirmed = await findOrderById(db, order.id);
    clock.advance(1000);

    const again = await insertOrderIfAbsent(db, clock, {
      ...order,
      request: { something: 'else' },
      customerId: 'another-customer',
    });
    expect(again.created).toBe(false);
    expect(again.order).toEqual(confirmed);
    expect(again.order.request).toEqual(first.order.request);
    expect(again.order.createdAt).toBe(first.order.createdAt);
  });

  it('lets exactly one of two simultaneous inserts of one order create it', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    const results = await Promise.all([
      insertOrderIfAbsent(db, clock, order),
      insertOrderIfAbsent(db, clock, order),
    ]);
    expect(results.map((r) => r.created).sort()).toEqual([false, true]);
    expect(results[0].order).toEqual(results[1].order);
  });

  it('refuses a second order that reuses another order’s Bestellung id', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    await insertOrderIfAbsent(db, clock, order);
    await expect(
      insertOrderIfAbsent(db, clock, { ...order, id: `GW-other-${randomToken(8)}` }),
    ).rejects.toThrow();
  });

  it('refuses an order for an unknown account', async () => {
    const order = await newOrder({ accountId: 'acct_nobody' });
    await expect(insertOrderIfAbsent(getDatabase().db, clock, order)).rejects.toThrow();
  });

  it('returns undefined for an unknown order id', async () => {
    const { db } = getDatabase();
    expect(await findOrderById(db, 'GW-unknown')).toBeUndefined();
    const order = await newOrder();
    expect(await findOwnOrder(db, ownerOf(order), 'GW-unknown')).toBeUndefined();
  });

  it('finds an order by id whoever owns it', async () => {
    const { db } = getDatabase();
    const order = await newOrder({ mode: 'live', wholesaler: 'phoenix' });
    await insertOrderIfAbsent(db, clock, order);
    expect(await findOrderById(db, order.id)).toMatchObject({ id: order.id, accountId: order.accountId });
  });

  it('keeps one account’s orders from another', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    await insertOrderIfAbsent(db, clock, order);
    const other = await createAccount(db, clock, { name: 'Andere Apotheke' });
    expect(await findOwnOrder(db, { ...ownerOf(order), accountId: other.id }, order.id)).toBeUndefined();
    expect(await findOwnOrder(db, ownerOf(order), order.id)).toMatchObject({ id: order.id });
  });

  it('finds an order only in its own mode, wholesaler and MSV3 customer', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    await insertOrderIfAbsent(db, clock, order);
    const owner = ownerOf(order);
    expect(await findOwnOrder(db, { ...owner, mode: 'live' }, order.id)).toBeUndefined();
    expect(await findOwnOrder(db, { ...owner, wholesaler: 'phoenix' }, order.id)).toBeUndefined();
    expect(await findOwnOrder(db, { ...owner, customerId: 'PLA\\apotheke2' }, order.id)).toBeUndefined();
    expect(await findOwnOrder(db, owner, order.id)).toEqual(await findOrderById(db, order.id));
  });

  it('applies only the fields of a change and moves the update time', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    const { order: stored } = await insertOrderIfAbsent(db, clock, order);
    const answer = [{ id: 'A1', lines: [{ pzn: '04114918', delivered: 2 }] }];

    clock.advance(500);
    await updateOrder(db, clock, order.id, { state: 'unknown' });
    expect(await findOrderById(db, order.id)).toEqual({
      ...stored,
      state: 'unknown',
      updatedAt: stored.createdAt + 500,
    });

    clock.advance(500);
    await updateOrder(db, clock, order.id, { answer, lastStatus: 'available' });
    expect(await findOrderById(db, order.id)).toEqual({
      ...stored,
      state: 'unknown',
      answer,
      lastStatus: 'available',
      updatedAt: stored.createdAt + 1000,
    });

    await updateOrder(db, clock, order.id, { lastStatus: null });
    expect((await findOrderById(db, order.id))?.lastStatus).toBeNull();
  });

  it('changes only the order it names', async () => {
    const { db } = getDatabase();
    const one = await newOrder();
    const two = await newOrder({ accountId: one.accountId });
    await insertOrderIfAbsent(db, clock, one);
    const { order: untouched } = await insertOrderIfAbsent(db, clock, two);
    clock.advance(10);
    await updateOrder(db, clock, one.id, { state: 'rejected', answer: [] });
    expect((await findOrderById(db, one.id))?.state).toBe('rejected');
    expect(await findOrderById(db, two.id)).toEqual(untouched);
  });

  it('does nothing when updating an unknown order', async () => {
    const { db } = getDatabase();
    await expect(updateOrder(db, clock, 'GW-unknown', { state: 'confirmed' })).resolves.toBeUndefined();
    expect(await findOrderById(db, 'GW-unknown')).toBeUndefined();
  });

  it('writes an update inside a transaction only when it commits', async () => {
    const { db } = getDatabase();
    const order = await newOrder();
    await insertOrderIfAbsent(db, clock, order);
    await expect(
      db.transaction().execute(async (trx) => {
        await updateOrder(trx, clock, order.id, { state: 'confirmed' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await findOrderById(db, order.id))?.state).toBe('sending');
    await db.transaction().execute((trx) => updateOrder(trx, clock, order.id, { state: 'confirmed' }));
    expect((await findOrderById(db, order.id))?.state).toBe('confirmed');
  });
});
