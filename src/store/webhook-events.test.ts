import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import type { Tenant } from '../core/caller.js';
import { newEventId } from '../lib/ids.js';
import { newScope } from '../webhooks/test-support/fixtures.js';
import { findEventPayload, listEvents } from './webhook-events.js';
import { insertEventWithDeliveries } from './webhook-outbox.js';

describeEachDialect('events feed store', (getDatabase) => {
  /** Stores an event of `scope` at `at` (ms) without deliveries; returns its id. */
  async function store(tenant: Tenant, at: number, type = 'delivery.received', wholesaler = 'phoenix') {
    const id = newEventId();
    const payload = JSON.stringify({
      id,
      type,
      created_at: new Date(at).toISOString(),
      wholesaler,
      data: {},
    });
    await insertEventWithDeliveries(
      getDatabase().db,
      {
        id,
        account_id: tenant.accountId,
        mode: tenant.mode,
        type,
        wholesaler,
        customer_id: null,
        payload,
        created_at: at,
      },
      [],
    );
    return id;
  }

  const idsOf = (page: { payloads: string[] }) =>
    page.payloads.map((p) => (JSON.parse(p) as { id: string }).id);

  it('pages events of one instant by id, newest first, without gaps or repeats', async () => {
    const { db } = getDatabase();
    const tenant = await newScope(db);
    const at = Date.UTC(2026, 0, 5, 9);
    const older = await store(tenant, at - 1);
    const same = await Promise.all([1, 2, 3, 4, 5].map(() => store(tenant, at)));
    const newer = await store(tenant, at + 1);
    const all = idsOf(await listEvents(db, tenant, { limit: 100 }));
    // Ties in the order of the ids as the database compares them (its collation, on PostgreSQL).
    expect(all[0]).toBe(newer);
    expect(all.slice(1, 6).sort()).toEqual([...same].sort());
    expect(all[6]).toBe(older);

    const seen: string[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await listEvents(db, tenant, { limit: 2, ...(startingAfter ? { startingAfter } : {}) });
      seen.push(...idsOf(page));
      if (!page.hasMore) break;
      startingAfter = seen.at(-1);
    }
    expect(seen).toEqual(all);
  });

  it('bounds by time (after inclusive, before exclusive), type and wholesaler; leaves pings out', async () => {
    const { db } = getDatabase();
    const tenant = await newScope(db);
    const at = Date.UTC(2026, 0, 5, 9);
    const first = await store(tenant, at);
    const second = await store(tenant, at + 1000, 'delivery.shortage');
    const third = await store(tenant, at + 2000, 'delivery.received', 'aep');
    const ping = await store(tenant, at + 3000, 'ping');
    expect(idsOf(await listEvents(db, tenant, { limit: 10 }))).toEqual([third, second, first]);
    expect(
      idsOf(await listEvents(db, tenant, { limit: 10, createdAfter: at + 1000, createdBefore: at + 2000 })),
    ).toEqual([second]);
    expect(idsOf(await listEvents(db, tenant, { limit: 10, type: 'delivery.received' }))).toEqual([
      third,
      first,
    ]);
    expect(idsOf(await listEvents(db, tenant, { limit: 10, wholesaler: 'aep' }))).toEqual([third]);
    expect(await findEventPayload(db, tenant, ping)).toBeUndefined();
    expect(await listEvents(db, tenant, { limit: 10, startingAfter: ping })).toEqual({
      payloads: [],
      hasMore: false,
    });
    expect(JSON.parse((await findEventPayload(db, tenant, first))!).id).toBe(first);
    expect(await findEventPayload(db, { ...tenant, mode: 'live' }, first)).toBeUndefined();
  });
});
