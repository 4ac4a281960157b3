import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../msv3/operations/bestellstatus-abfragen.js';
import { dokumentAbfragen } from '../msv3/operations/dokument-abfragen.js';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import { lieferavisAbfrageHist } from '../msv3/operations/lieferavis-abfrage-hist.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { lieferavisBestaetigen } from '../msv3/operations/lieferavis-bestaetigen.js';
import { retourenavisAnkuendigen } from '../msv3/operations/retourenavis-ankuendigen.js';
import { ruecknahmeangebotAnfordern } from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import type { Database } from '../store/database.js';
import { sandboxTenantStore } from '../store/sandbox-state.js';
import { RECORD_RETENTION_MS } from './retention.js';
import { SCENARIO_PZNS } from './scenarios.js';
import { decodeTenant } from './state-codec.js';
import {
  CLIENT_ID,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
  uuid,
} from './test-support/sandbox.js';
import { snapshotOf, tenantStoreInMemory, wholeStateDocument } from './test-support/tenant-store.js';
import { memoryWorld, persistentWorld, type TenantStore } from './world-store.js';

/**
 * The mock with its tenants in a real database (SQLite here; the gateway's processes test PostgreSQL in
 * test/sandbox-shared.test.ts): what one server stored, a second server on the same database finds, and
 * two servers at once never give out a number twice.
 */

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('sqlite');
});
afterAll(async () => {
  await database?.dispose();
});

const clock = manualClock(Date.UTC(2026, 10, 24, 8, 0, 0)); // a Tuesday, 09:00 in Berlin
const onDatabase = (db: Database) =>
  startSandbox({ clock, world: persistentWorld(sandboxTenantStore(db.db, clock)) });

/**
 * SQLite in one process answers at once, so two servers' requests would never overlap: reads that take a
 * few milliseconds let another server write between one request's read and its write, as on PostgreSQL.
 */
function withSlowReads(store: TenantStore): TenantStore {
  return {
    read: async (tenant, knownVersion) => {
      const stored = await store.read(tenant, knownVersion);
      await delay(Math.random() * 5); // a network database's latency, not a wait for anything
      return stored;
    },
    write: (tenant, change, expectedVersion) => store.write(tenant, change, expectedVersion),
  };
}

/** The tenant as a world that has never seen it loads it from the database now. */
async function loadedFresh(db: Database, tenant: string) {
  const world = persistentWorld(sandboxTenantStore(db.db, clock));
  return world.update(tenant, 'read', async (state) => ({ changed: false, snapshot: snapshotOf(state) }));
}

/** Everything stored for the tenant, head and records with their keys, as one text. */
async function storedText(tenant: string): Promise<string> {
  const stored = await sandboxTenantStore(database.db, clock).read(tenant);
  return [stored?.head, ...(stored?.records ?? []).map((r) => `${r.key} ${r.document}`)].join('\n');
}

const neu = (sandbox: Sandbox, username?: string) =>
  sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username });
/** One unit of `04114918` from `notice` announced for return (damaged); the answer. */
const returnOne = (
  sandbox: Sandbox,
  notice: DeliveryNotice,
  options: { username: string; tenant?: string },
) =>
  sandbox.ok(
    retourenavisAnkuendigen,
    {
      clientSoftwareId: CLIENT_ID,
      announcement: {
        id: uuid(),
        supportId: 7,
        positions: [
          {
            positionRef: 1,
            deliveryNoteNumber: notice.deliveryNoteNumber,
            pzn: '04114918',
            quantity: 1,
            reason: 'Beschaedigt',
          },
        ],
      },
    },
    options,
  );
const pdf = async (sandbox: Sandbox, documentId: string, username?: string) =>
  (await sandbox.ok(dokumentAbfragen, { clientSoftwareId: CLIENT_ID, documentId }, { username })).document!
    .data;

function noteSequence(notice: DeliveryNotice): number {
  return Number(notice.deliveryNoteNumber.slice(-6));
}

describe('a second server on the same database', () => {
  it('finds orders, notices, returns and take-back offers, renders the same PDFs and counts on', async () => {
    const username = 'apoRestart';
    const firstWorld = persistentWorld(sandboxTenantStore(database.db, clock));
    const first = await startSandbox({ clock, world: firstWorld });
    const order = orderRequest(
      subOrder([
        ['04114918', 3],
        [SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, 4],
      ]),
    );
    await first.ok(bestellen, order, { username });
    const [notice] = (await neu(first, username)).notices;
    const offer = await first.ok(
      ruecknahmeangebotAnfordern,
      { clientSoftwareId: CLIENT_ID, id: uuid(), articles: [{ pzn: '04114918', quantity: 1 }] },
      { username },
    );
    const announcement = await returnOne(first, notice!, { username });
    const slipId = announcement.answer!.portions[0]!.documentId!;
    const notePdf = await pdf(first, notice!.documentId!, username);
    const slipPdf = await pdf(first, slipId, username);
    const status = await first.ok(
      bestellstatusAbfragen,
      { clientSoftwareId: CLIENT_ID, orderId: order.id },
      { username },
    );
    // Every record the requests changed was saved: a world that never saw the tenant loads the same state.
    expect((await loadedFresh(database, 'test')).snapshot).toEqual(
      snapshotOf(firstWorld.findTenant('test')!),
    );
    await first.close();

    const second = await onDatabase(await database.openAnother());
    try {
      expect(
        await second.ok(
          bestellstatusAbfragen,
          { clientSoftwareId: CLIENT_ID, orderId: order.id },
          { username },
        ),
      ).toEqual(status);
      expect((await neu(second, username)).notices).toEqual([notice]);
      expect((await pdf(second, notice!.documentId!, username)).equals(notePdf)).toBe(true);
      expect((await pdf(second, slipId, username)).equals(slipPdf)).toBe(true);
      // Repeats get the stored answers, not new references.
      expect(await second.ok(bestellen, order, { username })).toEqual(
        expect.objectContaining({ id: order.id, nightMode: false }),
      );
      expect(second.mock.placedOrderCount({ customerId: username })).toBe(1);
      const offerAgain = await second.ok(
        ruecknahmeangebotAnfordern,
        { clientSoftwareId: CLIENT_ID, id: offer.id, articles: [{ pzn: '04114918', quantity: 1 }] },
        { username },
      );
      expect(offerAgain.referenceId).toBe(offer.referenceId);
      // The same units cannot go back twice: the booking survived.
      await second.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username });
      const notices = (await neu(second, username)).notices;
      expect(notices).toHaveLength(2);
      expect(noteSequence(notices[1]!)).toBe(noteSequence(notice!) + 1);
      expect(notices[1]!.lines[0]!.delivered[0]!.parcelNumber).not.toBe(
        notice!.lines[0]!.delivered[0]!.parcelNumber,
      );
    } finally {
      await second.close();
    }
  });
});

describe('two servers on one database at once', () => {
  it('give out every delivery-note number once, and each sees the orders of the other', async () => {
    const username = 'apoTwoServers';
    // Two worlds with caches of their own on one connection: SQLite has one per process (a second one in
    // this process would wait for the first's transaction while blocking the thread that must end it).
    const started = [database, database].map((db) =>
      startSandbox({ clock, world: persistentWorld(withSlowReads(sandboxTenantStore(db.db, clock))) }),
    );
    const [first, second] = await Promise.all(started);
    if (first === undefined || second === undefined) throw new Error('not started');
    try {
      const orders = Array.from({ length: 12 }, () => orderRequest(subOrder([['04114918', 1]])));
      await Promise.all(
        orders.map((order, i) => (i % 2 === 0 ? first : second).ok(bestellen, order, { username })),
      );
      const seenByFirst = (await neu(first, username)).notices.map((n) => n.deliveryNoteNumber);
      const seenBySecond = (await neu(second, username)).notices.map((n) => n.deliveryNoteNumber);
      expect(new Set(seenByFirst).size).toBe(12);
      expect(seenBySecond).toEqual(seenByFirst);
      for (const order of orders) {
        const status = await second.ok(
          bestellstatusAbfragen,
          { clientSoftwareId: CLIENT_ID, orderId: order.id },
          { username },
        );
        expect(status.status).toBe('BestellantwortVerfuegbar');
      }
      // A confirmation through one server is seen by the other.
      await first.ok(
        lieferavisBestaetigen,
        { clientSoftwareId: CLIENT_ID, deliveryNoteNumbers: seenByFirst.slice(0, 5) },
        { username },
      );
      expect((await neu(second, username)).notices).toHaveLength(7);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('the stored head and records', () => {
  it('decode to the state they were made from (Maps, Sets, order of entries), pending night orders and confirmations included', async () => {
    const username = 'apoCodec';
    const world = persistentWorld(sandboxTenantStore(database.db, clock));
    const sandbox = await startSandbox({ clock, world });
    try {
      await sandbox.ok(
        bestellen,
        orderRequest(
          subOrder([
            ['04114918', 2],
            [SCENARIO_PZNS.SUBSTITUTION.pzn, 1],
          ]),
        ),
        { username },
      );
      await sandbox.ok(bestellen, orderRequest(subOrder([[SCENARIO_PZNS.NIGHT_MODE.pzn, 1]])), { username });
      await sandbox.ok(
        bestellen,
        orderRequest(subOrder([['01234567', 5]]), subOrder([[SCENARIO_PZNS.ORDER_REJECTED.pzn, 1]])),
        { username },
      );
      const [confirmed] = (await neu(sandbox, username)).notices;
      await sandbox.ok(
        lieferavisBestaetigen,
        { clientSoftwareId: CLIENT_ID, deliveryNoteNumbers: [confirmed!.deliveryNoteNumber] },
        { username },
      );
      const stored = await sandboxTenantStore(database.db, clock).read('test');
      const decoded = decodeTenant('test', stored!.head!, stored!.records!).tenant;
      expect(snapshotOf(decoded)).toEqual(snapshotOf(world.findTenant('test')!));
      const customer = decoded.customers.get(username)!;
      expect(customer.orders).toBeInstanceOf(Map);
      expect(customer.pendingOrders).toBeInstanceOf(Set);
      expect(customer.pendingOrders.size).toBe(1);
      expect(customer.ordersPlaced).toBe(3);
      expect(customer.contract.customerId).toBe(username);
      expect(customer.notices.get(confirmed!.deliveryNoteNumber)!.confirmed).toBe(true);
      // In creation order: the confirmed one first, then those `lieferavisAbfrageNeu` still lists.
      expect([...customer.notices.keys()]).toEqual([
        confirmed!.deliveryNoteNumber,
        ...(await neu(sandbox, username)).notices.map((n) => n.deliveryNoteNumber),
      ]);
      // Rendered PDFs are not kept: they are rendered again, byte for byte the same.
      await pdf(sandbox, confirmed!.documentId!, username);
      expect(await storedText('test')).not.toContain('%PDF');
    } finally {
      await sandbox.close();
    }
  });

  it('hold a night order once processed later, though the order changed in place', async () => {
    const username = 'apoNight';
    const ownClock = manualClock(Date.UTC(2026, 10, 24, 8, 0, 0));
    const world = persistentWorld(sandboxTenantStore(database.db, ownClock));
    const sandbox = await startSandbox({ clock: ownClock, world });
    try {
      const order = orderRequest(subOrder([[SCENARIO_PZNS.NIGHT_MODE.pzn, 1]]));
      await sandbox.ok(bestellen, order, { username, tenant: 'night' });
      ownClock.advance(86_400_000);
      const status = await sandbox.ok(
        bestellstatusAbfragen,
        { clientSoftwareId: CLIENT_ID, orderId: order.id },
        { username, tenant: 'night' },
      );
      expect(status.status).toBe('BestellantwortVerfuegbar');
      const fresh = await loadedFresh(database, 'night');
      expect(fresh.snapshot).toEqual(snapshotOf(world.findTenant('night')!));
    } finally {
      await sandbox.close();
    }
  });

  it('grow by what a request changed: the hundredth order writes what the second did', async () => {
    const writes: { head: number; records: number; bytes: number }[] = [];
    const inMemory = tenantStoreInMemory();
    const store: TenantStore = {
      read: (tenant, knownVersion) => inMemory.read(tenant, knownVersion),
      write: (tenant, change, expectedVersion) => {
        const bytes = change.records.reduce((n, r) => n + (r.document?.length ?? 0), 0);
        writes.push({ head: change.head.length, records: change.records.length, bytes });
        return inMemory.write(tenant, change, expectedVersion);
      },
    };
    const sandbox = await startSandbox({ clock, world: persistentWorld(store) });
    try {
      for (let i = 0; i < 100; i++) {
        await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 2]])), { username: 'apoGrowth' });
      }
    } finally {
      await sandbox.close();
    }
    const [second, last] = [writes[1]!, writes.at(-1)!];
    expect(writes).toHaveLength(100);
    expect(last.records).toBe(second.records);
    expect(last.bytes).toBeLessThan(second.bytes * 1.1);
    expect(last.head - second.head).toBeLessThanOrEqual(10); // its counters have more digits
  });

  it('read a tenant an earlier version stored whole, and store it as records on its next save', async () => {
    const username = 'apoFormatOne';
    const tenant = 'format-one';
    const earlier = memoryWorld();
    const before = await startSandbox({ clock, world: earlier });
    let notices: DeliveryNotice[];
    try {
      await before.ok(bestellen, orderRequest(subOrder([['04114918', 2]])), { username, tenant });
      await before.ok(bestellen, orderRequest(subOrder([['01234567', 1]])), { username, tenant });
      notices = (await before.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username, tenant }))
        .notices;
    } finally {
      await before.close();
    }
    const store = sandboxTenantStore(database.db, clock);
    const whole = wholeStateDocument(earlier.findTenant(tenant)!);
    await store.write(tenant, { head: whole, records: [], replaceAll: false }, 0);

    const world = persistentWorld(store);
    const sandbox = await startSandbox({ clock, world });
    try {
      const listed = (
        await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username, tenant })
      ).notices;
      expect(listed).toEqual(notices);
      await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username, tenant });
    } finally {
      await sandbox.close();
    }
    const stored = await store.read(tenant);
    expect(JSON.parse(stored!.head!)).toMatchObject({ format: 2 });
    expect(stored!.records!.filter((r) => r.kind === 'order')).toHaveLength(3);
    expect((await loadedFresh(database, tenant)).snapshot).toEqual(snapshotOf(world.findTenant(tenant)!));
  });

  it('forgets notices, returns and take-back offers after 30 days, so it stays bounded', async () => {
    const username = 'apoRetention';
    const ownClock = manualClock(Date.UTC(2026, 10, 24, 8, 0, 0));
    const sandbox = await startSandbox({
      clock: ownClock,
      world: persistentWorld(sandboxTenantStore(database.db, ownClock)),
    });
    try {
      await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 2]])), {
        username,
        tenant: 'retention',
      });
      const [notice] = (
        await sandbox.ok(
          lieferavisAbfrageNeu,
          { clientSoftwareId: CLIENT_ID },
          { username, tenant: 'retention' },
        )
      ).notices;
      const on = { username, tenant: 'retention' };
      const offer = await sandbox.ok(
        ruecknahmeangebotAnfordern,
        { clientSoftwareId: CLIENT_ID, id: uuid(), articles: [{ pzn: '04114918', quantity: 1 }] },
        on,
      );
      const announced = await returnOne(sandbox, notice!, on);
      const slipId = announced.answer!.portions[0]!.documentId!;
      const before = await storedText('retention');
      const booked = `${notice!.deliveryNoteNumber}|04114918`; // the units accepted for return
      for (const kept of [notice!.documentId!, slipId, offer.referenceId!, booked]) {
        expect(before).toContain(kept);
      }
      // A day before the first records are due, an order that stays after they go.
      ownClock.advance(RECORD_RETENTION_MS - 86_400_000);
      await sandbox.ok(bestellen, orderRequest(subOrder([['01234567', 1]])), on);
      const later = (await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, on)).notices.at(
        -1,
      );
      ownClock.advance(86_400_000 + 60_000);
      const error = await sandbox.fails(
        lieferavisAbfrageHist,
        { clientSoftwareId: CLIENT_ID, deliveryNoteNumber: notice!.deliveryNoteNumber },
        on,
      );
      expect(JSON.stringify(error)).toContain('L001');
      const text = await storedText('retention');
      for (const gone of [notice!.deliveryNoteNumber, notice!.documentId!, slipId, offer.referenceId!]) {
        expect(text).not.toContain(gone);
      }
      expect(text).toContain(later!.documentId!);
      const pdfOfLater = await sandbox.ok(
        dokumentAbfragen,
        { clientSoftwareId: CLIENT_ID, documentId: later!.documentId! },
        on,
      );
      expect(pdfOfLater.document?.data.subarray(0, 5).toString()).toBe('%PDF-');
    } finally {
      await sandbox.close();
    }
  });
});

describe('a store that is away', () => {
  it('answers whether a tenant is down from what it saw last (up when never seen), instead of failing', async () => {
    let away = false;
    let reads = 0;
    const inMemory = tenantStoreInMemory();
    const store: TenantStore = {
      async read(tenant, knownVersion) {
        reads++;
        if (away) throw new Error('connection refused');
        return inMemory.read(tenant, knownVersion);
      },
      async write(tenant, change, expectedVersion) {
        if (away) throw new Error('connection refused');
        return inMemory.write(tenant, change, expectedVersion);
      },
    };
    let elapsed = 0;
    const world = persistentWorld(store, { retryDelayMs: 1, elapsedMs: () => elapsed });
    away = true;
    await expect(world.isDown('sandbox/never-seen')).resolves.toBe(false);
    away = false;
    await world.update('sandbox/a', 'write', async (tenant) => {
      tenant.down = true;
      return { changed: true };
    });
    expect(await world.isDown('sandbox/a')).toBe(true);
    away = true;
    const readsBefore = reads;
    expect(await world.isDown('sandbox/a')).toBe(true); // the cached answer, not asking the store
    expect(reads).toBe(readsBefore);
    elapsed += 1_001; // past the cached answer's lifetime: the store is asked, and is away
    await expect(world.isDown('sandbox/a')).resolves.toBe(true);
    expect(reads).toBeGreaterThan(readsBefore);
  });
});
