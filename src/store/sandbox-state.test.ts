import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { sandboxTenantDocuments } from './sandbox-state.js';

describeEachDialect('sandbox tenant documents', (getDatabase) => {
  const clock = manualClock();
  let n = 0;
  const newTenant = () => `sandbox/${++n}/phoenix`;

  it('reads nothing for a tenant never written, then what was written, with version 1', async () => {
    const documents = sandboxTenantDocuments(getDatabase().db, clock);
    const tenant = newTenant();
    expect(await documents.read(tenant)).toBeUndefined();
    const text = JSON.stringify({ counters: { deliveryNote: 7 }, note: 'Größe ✓' });
    expect(await documents.write(tenant, text, 0)).toBe(1);
    expect(await documents.read(tenant)).toEqual({ version: 1, document: text });
  });

  it('leaves the document out when the caller has that version already', async () => {
    const documents = sandboxTenantDocuments(getDatabase().db, clock);
    const tenant = newTenant();
    await documents.write(tenant, '{"a":1}', 0);
    expect(await documents.read(tenant, 1)).toEqual({ version: 1 });
    await documents.write(tenant, '{"a":2}', 1);
    expect(await documents.read(tenant, 1)).toEqual({ version: 2, document: '{"a":2}' });
  });

  it('refuses a write whose expected version is not the stored one (compare and set)', async () => {
    const documents = sandboxTenantDocuments(getDatabase().db, clock);
    const tenant = newTenant();
    expect(await documents.write(tenant, '{"by":"A"}', 0)).toBe(1);
    expect(await documents.write(tenant, '{"by":"B"}', 0)).toBeUndefined();
    expect(await documents.write(tenant, '{"by":"A2"}', 1)).toBe(2);
    expect(await documents.write(tenant, '{"by":"B2"}', 1)).toBeUndefined();
    expect(await documents.read(tenant)).toEqual({ version: 2, document: '{"by":"A2"}' });
  });

  it('lets exactly one of two handles win a race from the same version', async () => {
    const first = sandboxTenantDocuments(getDatabase().db, clock);
    const second = sandboxTenantDocuments((await getDatabase().openAnother()).db, clock);
    const tenant = newTenant();
    await first.write(tenant, '{}', 0);
    const results = await Promise.all([
      first.write(tenant, '{"by":"first"}', 1),
      second.write(tenant, '{"by":"second"}', 1),
    ]);
    expect(results.filter((r) => r === 2)).toHaveLength(1);
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    const winner = results[0] === 2 ? 'first' : 'second';
    expect((await second.read(tenant))?.document).toBe(`{"by":"${winner}"}`);
  });

  it('keeps each tenant apart and the text through a new connection (counters survive)', async () => {
    const tenantA = newTenant();
    const tenantB = newTenant();
    const documents = sandboxTenantDocuments(getDatabase().db, clock);
    await documents.write(tenantA, '{"counters":{"deliveryNote":41}}', 0);
    await documents.write(tenantB, '{"counters":{"deliveryNote":2}}', 0);
    const reopened = sandboxTenantDocuments((await getDatabase().openAnother()).db, clock);
    expect(await reopened.read(tenantA)).toEqual({
      version: 1,
      document: '{"counters":{"deliveryNote":41}}',
    });
    expect(await reopened.read(tenantB)).toEqual({ version: 1, document: '{"counters":{"deliveryNote":2}}' });
  });
});
