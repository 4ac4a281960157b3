import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecordJournal, RecordMap } from './record-map.js';
import { customerOf, newTenantState } from './state.js';
import { decodeTenant, encodeChanges, encodeHead } from './state-codec.js';
import { snapshotOf, tenantStoreInMemory, wholeStateDocument } from './test-support/tenant-store.js';

const changes = (journal: RecordJournal) =>
  [...journal.entries()].map(({ map, key, change }) => `${map.kind}:${key}:${change}`);

describe('a record map in a journal', () => {
  it('notes new and changed keys once each, in the order they first changed', () => {
    const journal = new RecordJournal();
    const orders = new RecordMap<number>('apo', 'order', journal).restore([['a', 1]]);
    orders.set('b', 2);
    orders.set('a', 10);
    orders.set('b', 20);
    expect(changes(journal)).toEqual(['order:b:set', 'order:a:set']);
  });

  it('notes a deletion, and a key deleted and set again as moved, last', () => {
    const journal = new RecordJournal();
    const notices = new RecordMap<number>('apo', 'notice', journal).restore([
      ['a', 1],
      ['b', 2],
    ]);
    notices.delete('a');
    notices.set('c', 3);
    notices.set('a', 4);
    notices.delete('b');
    notices.delete('nothing');
    expect(changes(journal)).toEqual(['notice:c:set', 'notice:a:moved', 'notice:b:deleted']);
    expect([...notices.keys()]).toEqual(['c', 'a']);
  });

  it('notes nothing for restored entries, nor without a journal', () => {
    const journal = new RecordJournal();
    new RecordMap<number>('apo', 'order', journal).restore([['a', 1]]);
    const unjournaled = new RecordMap<number>('apo', 'order', undefined);
    unjournaled.set('a', 1);
    unjournaled.delete('a');
    expect(journal.size).toBe(0);
  });

  it('notes every key of a cleared map as deleted', () => {
    const journal = new RecordJournal();
    const offers = new RecordMap<number>('apo', 'take-back', journal).restore([
      ['a', 1],
      ['b', 2],
    ]);
    offers.clear();
    expect(offers.size).toBe(0);
    expect(changes(journal)).toEqual(['take-back:a:deleted', 'take-back:b:deleted']);
  });
});

/** One step a handler might take on a customer's records. */
type Step =
  | { op: 'set'; customer: number; map: number; key: number; value: number }
  | { op: 'delete'; customer: number; map: number; key: number }
  | { op: 'save' };

// Mostly one customer's orders, so that keys meet again (a key deleted, then set anew); sometimes any.
const customer = fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(1) });
const map = fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(5) });
const key = fc.nat(3);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('set' as const), customer, map, key, value: fc.integer() }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), customer, map, key }) },
  { weight: 1, arbitrary: fc.constant({ op: 'save' as const }) },
);

describe('saving only what the journal names', () => {
  it('stores a state that decodes to the one in memory (entries, values and order), after any steps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const store = tenantStoreInMemory();
        const journal = new RecordJournal();
        const tenant = newTenantState('t', journal);
        let version = 0;
        const save = async () => {
          const change = { head: encodeHead(tenant), records: encodeChanges(journal), replaceAll: false };
          version = (await store.write('t', change, version))!;
          journal.clear();
        };
        for (const s of steps) {
          if (s.op === 'save') {
            await save();
            continue;
          }
          const customer = customerOf(tenant, `apo${s.customer}`);
          const maps = [
            customer.orders,
            customer.notices,
            customer.documents,
            customer.announcements,
            customer.returnedUnits,
            customer.takeBackOffers,
          ] as RecordMap<unknown>[];
          const map = maps[s.map]!;
          if (s.op === 'set') map.set(`k${s.key}`, { value: s.value });
          else map.delete(`k${s.key}`);
        }
        await save();
        const stored = await store.read('t');
        const decoded = decodeTenant('t', stored!.head!, stored!.records!).tenant;
        expect(snapshotOf(decoded)).toEqual(snapshotOf(tenant));
      }),
      { numRuns: 1_000 },
    );
  });

  it('reads a format 1 document (the whole state in one) and notes every record for the next save', async () => {
    const before = newTenantState('t');
    const customer = customerOf(before, 'apo');
    customer.orders.set('o1', { id: 'o1' } as never);
    customer.notices.set('n1', { createdAt: 1 } as never);
    customer.pendingOrders.add('o1');
    customer.ordersPlaced = 1;
    before.counters.deliveryNote = 7;
    before.down = true;

    const journal = new RecordJournal();
    const { tenant, wholeState } = decodeTenant('t', wholeStateDocument(before), [], journal);
    expect(wholeState).toBe(true);
    expect(snapshotOf(tenant)).toEqual(snapshotOf(before));
    expect(changes(journal)).toEqual(['order:o1:set', 'notice:n1:set']);
  });

  it('refuses a head of an unknown format, and a record of an unknown kind, by name', () => {
    expect(() => decodeTenant('t', '{"format":9}', [])).toThrow('has format 9, expected 2');
    const head = encodeHead(newTenantState('t'));
    expect(() =>
      decodeTenant('t', head, [{ customerId: 'apo', kind: 'invoice', key: 'k', document: '{}' }]),
    ).toThrow('unknown kind "invoice"');
  });
});
