import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { type SandboxRecordWrite, sandboxTenantStore } from './sandbox-state.js';

describeEachDialect('sandbox tenants: heads and records', (getDatabase) => {
  const clock = manualClock();
  let n = 0;
  const newTenant = () => `sandbox/${++n}/phoenix`;
  const set = (key: string, document: string, kind = 'order'): SandboxRecordWrite => ({
    customerId: 'apo',
    kind,
    key,
    change: 'set',
    document,
  });
  const write = (head: string, records: SandboxRecordWrite[] = [], replaceAll = false) => ({
    head,
    records,
    replaceAll,
  });
  const keysOf = async (store: ReturnType<typeof sandboxTenantStore>, tenant: string) =>
    (await store.read(tenant))?.records?.map((r) => `${r.kind}:${r.key}=${r.document}`);

  it('reads nothing for a tenant never written, then the head and records written, with version 1', async () => {
    const store = sandboxTenantStore(getDatabase().db, clock);
    const tenant = newTenant();
    expect(await store.read(tenant)).toBeUndefined();
    const head = JSON.stringify({ counters: { deliveryNote: 7 }, note: 'Größe ✓' });
    expect(await store.write(tenant, write(head, [set('o1', '{"a":"ä"}')]), 0)).toBe(1);
    expect(await store.read(tenant)).toEqual({
      version: 1,
      head,
      records: [{ customerId: 'apo', kind: 'order', key: 'o1', document: '{"a":"ä"}' }],
    });
  });

  it('leaves head and records out when the caller has that version already', async () => {
    const store = sandboxTenantStore(getDatabase().db, clock);
    const tenant = newTenant();
    await store.write(tenant, write('{"a":1}'), 0);
    expect(await store.read(tenant, 1)).toEqual({ version: 1 });
    await store.write(tenant, write('{"a":2}'), 1);
    expect(await store.read(tenant, 1)).toEqual({ version: 2, head: '{"a":2}', records: [] });
  });

  it('changes a record in its place, deletes one, and puts a moved one last', async () => {
    const store = sandboxTenantStore(getDatabase().db, clock);
    const tenant = newTenant();
    await store.write(
      tenant,
      write('{}', [set('a', '1'), set('b', '2'), set('c', '3'), set('a', 'n', 'notice')]),
      0,
    );
    await store.write(tenant, write('{}', [set('a', '10'), { ...set('b', '20'), change: 'moved' }]), 1);
    await store.write(
      tenant,
      write('{}', [{ customerId: 'apo', kind: 'order', key: 'c', change: 'deleted' }]),
      2,
    );
    expect(await keysOf(store, tenant)).toEqual(['order:a=10', 'notice:a=n', 'order:b=20']);
  });

  it('replaces every record when told to (a whole-state head converted)', async () => {
    const store = sandboxTenantStore(getDatabase().db, clock);
    const tenant = newTenant();
    await store.write(tenant, write('{}', [set('old', '1')]), 0);
    await store.write(tenant, write('{}', [set('new', '2')], true), 1);
    expect(await keysOf(store, tenant)).toEqual(['order:new=2']);
  });

  it('refuses a write whose expected version is not the stored one, records and all (compare and set)', async () => {
    const store = sandboxTenantStore(getDatabase().db, clock);
    const tenant = newTenant();
    expect(await store.write(tenant, write('{"by":"A"}', [set('a', 'A')]), 0)).toBe(1);
    expect(await store.write(tenant, write('{"by":"B"}', [set('b', 'B')]), 0)).toBeUndefined();
    expect(await store.write(tenant, write('{"by":"A2"}', [set('a', 'A2')]), 1)).toBe(2);
    expect(await store.write(tenant, write('{"by":"B2"}', [set('a', 'B2')]), 1)).toBeUndefined();
    expect(await store.read(tenant)).toMatchObject({ version: 2, head: '{"by":"A2"}' });
    expect(await keysOf(store, tenant)).toEqual(['order:a=A2']);
  });

  it('lets exactly one of two handles win a race from the same version, with its records only', async () => {
    // Two connections on PostgreSQL; SQLite has one per process (a second one in this process would wait
    // for the first's transaction while blocking the thread that must finish it).
    const database = getDatabase();
    const first = sandboxTenantStore(database.db, clock);
    const other = database.dialect === 'postgres' ? (await database.openAnother()).db : database.db;
    const second = sandboxTenantStore(other, clock);
    const tenant = newTenant();
    await first.write(tenant, write('{}'), 0);
    const results = await Promise.all([
      first.write(tenant, write('{"by":"first"}', [set('first', '1')]), 1),
      second.write(tenant, write('{"by":"second"}', [set('second', '2')]), 1),
    ]);
    expect(results.filter((r) => r === 2)).toHaveLength(1);
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    const winner = results[0] === 2 ? 'first' : 'second';
    expect((await second.read(tenant))?.head).toBe(`{"by":"${winner}"}`);
    expect(await keysOf(second, tenant)).toEqual([`order:${winner}=${winner === 'first' ? 1 : 2}`]);
  });

  it('keeps each tenant apart, and heads and records through a new connection', async () => {
    const tenantA = newTenant();
    const tenantB = newTenant();
    const store = sandboxTenantStore(getDatabase().db, clock);
    await store.write(tenantA, write('{"counters":{"deliveryNote":41}}', [set('same', 'A')]), 0);
    await store.write(tenantB, write('{"counters":{"deliveryNote":2}}', [set('same', 'B')]), 0);
    const reopened = sandboxTenantStore((await getDatabase().openAnother()).db, clock);
    expect(await reopened.read(tenantA)).toMatchObject({
      version: 1,
      head: '{"counters":{"deliveryNote":41}}',
    });
    expect(await keysOf(reopened, tenantA)).toEqual(['order:same=A']);
    expect(await keysOf(reopened, tenantB)).toEqual(['order:same=B']);
  });

  it('reads a head and the records written with it, while another connection keeps writing', async () => {
    const database = getDatabase();
    const writer = sandboxTenantStore(
      database.dialect === 'postgres' ? (await database.openAnother()).db : database.db,
      clock,
    );
    const reader = sandboxTenantStore(database.db, clock);
    const tenant = newTenant();
    const generation = (n: number) =>
      write(
        JSON.stringify({ n }),
        [set('a', String(n)), set('b', String(n)), set(`only-${n}`, String(n))],
        true,
      );
    await writer.write(tenant, generation(1), 0);
    let stop = false;
    const writing = (async () => {
      for (let n = 2; !stop && n < 400; n++) await writer.write(tenant, generation(n), n - 1);
    })();
    try {
      for (let i = 0; i < 100; i++) {
        const stored = await reader.read(tenant);
        const { n } = JSON.parse(stored!.head!) as { n: number };
        expect(stored!.records!.map((r) => r.document)).toEqual([String(n), String(n), String(n)]);
      }
    } finally {
      stop = true;
      await writing;
    }
  });
});
