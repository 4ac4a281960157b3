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
import { sandboxTenantDocuments } from '../store/sandbox-state.js';
import { RECORD_RETENTION_MS } from './retention.js';
import { SCENARIO_PZNS } from './scenarios.js';
import { decodeTenant, encodeTenant } from './state-codec.js';
import {
  CLIENT_ID,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
  uuid,
} from './test-support/sandbox.js';
import { persistentWorld, type TenantDocuments } from './world-store.js';

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
  startSandbox({ clock, world: persistentWorld(sandboxTenantDocuments(db.db, clock)) });

/**
 * SQLite in one process answers at once, so two servers' requests would never overlap: reads that take a
 * few milliseconds let another server write between one request's read and its write, as on PostgreSQL.
 */
function withSlowReads(documents: TenantDocuments): TenantDocuments {
  return {
    read: async (tenant, knownVersion) => {
      const stored = await documents.read(tenant, knownVersion);
      await delay(Math.random() * 5); // a network database's latency, not a wait for anything

      return stored;
    },
    write: (tenant, document, expectedVersion) => documents.write(tenant, document, expectedVersion),
  };
}

const neu = (sandbox: Sandbox, username?: string) =>
  sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username });
const pdf = async (sandbox: Sandbox, documentId: string, username?: string) =>
  (await sandbox.ok(dokumentAbfragen, { clientSoftwareId: CLIENT_ID, documentId }, { username })).document!
    .data;
const storedDocument = async (tenant: string) =>
  (await sandboxTenantDocuments(database.db, clock).read(tenant))?.document;

function noteSequence(notice: DeliveryNotice): number {
  return Number(notice.deliveryNoteNumber.slice(-6));
}

describe('a second server on the same database', () => {
  it('finds orders, notices, returns and take-back offers, renders the same PDFs and counts on', async () => {
    const username = 'apoRestart';
    const first = await onDatabase(database);
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
    const announcement = await first.ok(
      retourenavisAnkuendigen,
      {
        clientSoftwareId: CLIENT_ID,
        announcement: {
          id: uuid(),
          supportId: 7,
          positions: [
            {
              positionRef: 1,
              deliveryNoteNumber: notice!.deliveryNoteNumber,
              pzn: '04114918',
              quantity: 1,
              reason: 'Beschaedigt',
            },
          ],
        },
      },
      { username },
    );
    const slipId = announcement.answer!.portions[0]!.documentId!;
    const notePdf = await pdf(first, notice!.documentId!, username);
    const slipPdf = await pdf(first, slipId, username);
    const status = await first.ok(
      bestellstatusAbfragen,
      { clientSoftwareId: CLIENT_ID, orderId: order.id },
      { username },
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
    const started = [database, await database.openAnother()].map((db) =>
      startSandbox({ clock, world: persistentWorld(withSlowReads(sandboxTenantDocuments(db.db, clock))) }),
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

describe('the stored document', () => {
  it('decodes to the state it was made from (Maps, Sets, order of entries), pending night orders included', async () => {
    const username = 'apoCodec';
    const sandbox = await onDatabase(database);
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
      const text = (await storedDocument('test'))!;
      const decoded = decodeTenant('test', text);
      expect(encodeTenant(decoded)).toBe(text);
      const customer = decoded.customers.get(username)!;
      expect(customer.orders).toBeInstanceOf(Map);
      expect(customer.pendingOrders).toBeInstanceOf(Set);
      expect(customer.pendingOrders.size).toBe(1);
      expect(customer.ordersPlaced).toBe(3);
      expect(customer.contract.customerId).toBe(username);
      expect([...customer.notices.keys()]).toEqual(
        (await neu(sandbox, username)).notices.map((n) => n.deliveryNoteNumber),
      );
      // Rendered PDFs are not kept: they are rendered again, byte for byte the same.
      expect(text).not.toContain('%PDF');
    } finally {
      await sandbox.close();
    }
  });

  it('forgets notices, returns and take-back offers after 30 days, so it stays bounded', async () => {
    const username = 'apoRetention';
    const ownClock = manualClock(Date.UTC(2026, 10, 24, 8, 0, 0));
    const sandbox = await startSandbox({
      clock: ownClock,
      world: persistentWorld(sandboxTenantDocuments(database.db, ownClock)),
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
      expect(await storedDocument('retention')).toContain(notice!.deliveryNoteNumber);
      ownClock.advance(RECORD_RETENTION_MS + 60_000);
      const error = await sandbox.fails(
        lieferavisAbfrageHist,
        { clientSoftwareId: CLIENT_ID, deliveryNoteNumber: notice!.deliveryNoteNumber },
        { username, tenant: 'retention' },
      );
      expect(JSON.stringify(error)).toContain('L001');
      const text = (await storedDocument('retention'))!;
      expect(text).not.toContain(notice!.deliveryNoteNumber);
      expect(text).not.toContain(notice!.documentId!);
    } finally {
      await sandbox.close();
    }
  });
});

describe('a store that is away', () => {
  it('answers whether a tenant is down from what it saw last (up when never seen), instead of failing', async () => {
    let away = false;
    let reads = 0;
    const stored = new Map<string, { version: number; document: string }>();
    const documents: TenantDocuments = {
      async read(tenant) {
        reads++;
        if (away) throw new Error('connection refused');
        return stored.get(tenant);
      },
      async write(tenant, document, expectedVersion) {
        if (away) throw new Error('connection refused');
        const version = (stored.get(tenant)?.version ?? 0) + 1;
        if (expectedVersion !== version - 1) return undefined;
        stored.set(tenant, { version, document });
        return version;
      },
    };
    let elapsed = 0;
    const world = persistentWorld(documents, { retryDelayMs: 1, elapsedMs: () => elapsed });
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
