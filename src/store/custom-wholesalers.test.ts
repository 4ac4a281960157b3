import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import type { Tenant } from '../core/caller.js';
import { manualClock } from '../lib/clock.js';
import { createAccount } from './accounts.js';
import {
  deleteCustomWholesaler,
  findCustomWholesaler,
  listCustomWholesalers,
  markCustomWholesalerVerified,
  upsertCustomWholesaler,
} from './custom-wholesalers.js';

describeEachDialect('custom wholesalers repository', (getDatabase) => {
  const clock = manualClock();

  async function newOwner(mode: Tenant['mode'] = 'test'): Promise<Tenant> {
    const account = await createAccount(getDatabase().db, clock, { name: 'Apotheke' });
    return { accountId: account.id, mode };
  }

  const registration = (id: string, endpoint = `https://${id}.example.com/msv3/v2.0`) => ({
    id,
    name: `Großhandel ${id}`,
    endpoint,
    version: 2 as const,
  });

  it('registers an endpoint unverified, without capabilities, at the clock time', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    const saved = await upsertCustomWholesaler(db, clock, tenant, {
      ...registration('custom-a'),
      version: 1,
    });
    expect(saved).toEqual({
      id: 'custom-a',
      accountId: tenant.accountId,
      mode: 'test',
      name: 'Großhandel custom-a',
      endpoint: 'https://custom-a.example.com/msv3/v2.0',
      version: 1,
      verified: false,
      capabilities: [],
      createdAt: clock.now(),
      verifiedAt: null,
    });
    expect(await findCustomWholesaler(db, tenant, 'custom-a')).toEqual(saved);
  });

  it('returns the existing registration when the same owner registers the same id again', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    const first = await upsertCustomWholesaler(db, clock, tenant, registration('custom-b'));
    await markCustomWholesalerVerified(db, clock, tenant, 'custom-b', ['bestellen']);
    const verified = await findCustomWholesaler(db, tenant, 'custom-b');
    clock.advance(1000);
    const again = await upsertCustomWholesaler(db, clock, tenant, registration('custom-b'));
    expect(again).toEqual(verified);
    expect(again.createdAt).toBe(first.createdAt);
    expect(await listCustomWholesalers(db, tenant)).toHaveLength(1);
  });

  it('keeps the registered endpoint and version when another endpoint arrives under the same id', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-c'));
    const again = await upsertCustomWholesaler(db, clock, tenant, {
      ...registration('custom-c', 'https://elsewhere.example.com/msv3'),
      version: 1,
    });
    expect(again.endpoint).toBe('https://custom-c.example.com/msv3/v2.0');
    expect(again.version).toBe(2);
  });

  // The service answers 409 for an id collision with another endpoint only after the upsert, so the
  // upsert must leave the existing registration exactly as it was.
  it('leaves the existing registration’s name alone when the same id arrives with another endpoint', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    await upsertCustomWholesaler(db, clock, tenant, { ...registration('custom-d'), name: 'Original' });
    await upsertCustomWholesaler(db, clock, tenant, {
      ...registration('custom-d', 'https://collision.example.com/msv3'),
      name: 'Intruder',
    });
    expect((await findCustomWholesaler(db, tenant, 'custom-d'))?.name).toBe('Original');
  });

  it('lets two owners register the same id without seeing each other’s', async () => {
    const { db } = getDatabase();
    const one = await newOwner();
    const other = await newOwner();
    const sameAccountLive: Tenant = { accountId: one.accountId, mode: 'live' };
    const mine = await upsertCustomWholesaler(db, clock, one, registration('custom-shared'));
    const theirs = await upsertCustomWholesaler(db, clock, other, {
      ...registration('custom-shared', 'https://theirs.example.com/msv3'),
      name: 'Theirs',
    });
    const live = await upsertCustomWholesaler(db, clock, sameAccountLive, {
      ...registration('custom-shared', 'https://live.example.com/msv3'),
      name: 'Live',
    });
    expect(theirs.endpoint).toBe('https://theirs.example.com/msv3');
    expect(live.endpoint).toBe('https://live.example.com/msv3');
    expect(await findCustomWholesaler(db, one, 'custom-shared')).toEqual(mine);
    expect(await findCustomWholesaler(db, other, 'custom-shared')).toEqual(theirs);
    expect(await findCustomWholesaler(db, sameAccountLive, 'custom-shared')).toEqual(live);
  });

  it('returns undefined for an id the owner has not registered', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    const stranger = await newOwner();
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-e'));
    expect(await findCustomWholesaler(db, tenant, 'custom-unknown')).toBeUndefined();
    expect(await findCustomWholesaler(db, stranger, 'custom-e')).toBeUndefined();
    expect(await findCustomWholesaler(db, { ...tenant, mode: 'live' }, 'custom-e')).toBeUndefined();
  });

  it('refuses a registration for an unknown account', async () => {
    await expect(
      upsertCustomWholesaler(
        getDatabase().db,
        clock,
        { accountId: 'acct_nobody', mode: 'test' },
        registration('x'),
      ),
    ).rejects.toThrow();
  });

  it('lists only the owner’s registrations, oldest first and by id within one time', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    const stranger = await newOwner();
    await upsertCustomWholesaler(db, clock, stranger, registration('custom-0'));
    await upsertCustomWholesaler(db, clock, { ...tenant, mode: 'live' }, registration('custom-live'));
    clock.advance(1);
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-z'));
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-m'));
    clock.advance(1);
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-a'));
    expect((await listCustomWholesalers(db, tenant)).map((w) => w.id)).toEqual([
      'custom-m',
      'custom-z',
      'custom-a',
    ]);
  });

  it('lists nothing for an owner without registrations', async () => {
    expect(await listCustomWholesalers(getDatabase().db, await newOwner())).toEqual([]);
  });

  it('marks a registration verified with its capabilities and the clock time', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    const saved = await upsertCustomWholesaler(db, clock, tenant, registration('custom-v'));
    clock.advance(60_000);
    await markCustomWholesalerVerified(db, clock, tenant, 'custom-v', [
      'verfuegbarkeitAnfragen',
      'bestellen',
    ]);
    expect(await findCustomWholesaler(db, tenant, 'custom-v')).toEqual({
      ...saved,
      verified: true,
      capabilities: ['verfuegbarkeitAnfragen', 'bestellen'],
      verifiedAt: saved.createdAt + 60_000,
    });

    clock.advance(1000);
    await markCustomWholesalerVerified(db, clock, tenant, 'custom-v', []);
    expect(await findCustomWholesaler(db, tenant, 'custom-v')).toMatchObject({
      verified: true,
      capabilities: [],
      verifiedAt: saved.createdAt + 61_000,
    });
  });

  it('verifies only the owner’s registration of that id', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    const stranger = await newOwner();
    const theirs = await upsertCustomWholesaler(db, clock, stranger, registration('custom-w'));
    const live = await upsertCustomWholesaler(
      db,
      clock,
      { ...tenant, mode: 'live' },
      registration('custom-w'),
    );
    const sibling = await upsertCustomWholesaler(db, clock, tenant, registration('custom-w2'));
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-w'));
    await markCustomWholesalerVerified(db, clock, tenant, 'custom-w', ['bestellen']);
    expect((await findCustomWholesaler(db, tenant, 'custom-w'))?.verified).toBe(true);
    expect(await findCustomWholesaler(db, stranger, 'custom-w')).toEqual(theirs);
    expect(await findCustomWholesaler(db, { ...tenant, mode: 'live' }, 'custom-w')).toEqual(live);
    expect(await findCustomWholesaler(db, tenant, 'custom-w2')).toEqual(sibling);
  });

  it('deletes only the owner’s registration of that id, once', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    const stranger = await newOwner();
    const liveOwner: Tenant = { ...tenant, mode: 'live' };
    const theirs = await upsertCustomWholesaler(db, clock, stranger, registration('custom-x'));
    const live = await upsertCustomWholesaler(db, clock, liveOwner, registration('custom-x'));
    const sibling = await upsertCustomWholesaler(db, clock, tenant, registration('custom-x2'));
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-x'));

    expect(await deleteCustomWholesaler(db, tenant, 'custom-x')).toBe(true);
    expect(await findCustomWholesaler(db, tenant, 'custom-x')).toBeUndefined();
    expect(await listCustomWholesalers(db, tenant)).toEqual([sibling]);
    expect(await findCustomWholesaler(db, stranger, 'custom-x')).toEqual(theirs);
    expect(await findCustomWholesaler(db, liveOwner, 'custom-x')).toEqual(live);

    expect(await deleteCustomWholesaler(db, tenant, 'custom-x')).toBe(false);
    expect(await deleteCustomWholesaler(db, tenant, 'custom-never')).toBe(false);
  });

  it('registers an endpoint again after its deletion, as new', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    await upsertCustomWholesaler(db, clock, tenant, registration('custom-y'));
    await markCustomWholesalerVerified(db, clock, tenant, 'custom-y', ['bestellen']);
    await deleteCustomWholesaler(db, tenant, 'custom-y');
    clock.advance(5_000);
    expect(await upsertCustomWholesaler(db, clock, tenant, registration('custom-y'))).toMatchObject({
      verified: false,
      capabilities: [],
      createdAt: clock.now(),
    });
  });

  it('creates nothing when verifying an id that is not registered', async () => {
    const { db } = getDatabase();
    const tenant = await newOwner();
    await markCustomWholesalerVerified(db, clock, tenant, 'custom-ghost', ['bestellen']);
    expect(await findCustomWholesaler(db, tenant, 'custom-ghost')).toBeUndefined();
    expect(await listCustomWholesalers(db, tenant)).toEqual([]);
  });
});
