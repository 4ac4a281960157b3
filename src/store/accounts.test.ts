import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { createAccount, findAccount, listAccounts } from './accounts.js';

describeEachDialect('accounts repository', (getDatabase) => {
  const clock = manualClock();

  it('creates an account with a prefixed id and the clock time', async () => {
    const account = await createAccount(getDatabase().db, clock, { name: 'Apotheke am Markt' });
    expect(account).toEqual({
      id: expect.stringMatching(/^acct_[0-9A-Za-z]{22}$/),
      name: 'Apotheke am Markt',
      createdAt: clock.now(),
    });
    expect(await findAccount(getDatabase().db, account.id)).toEqual(account);
  });

  it('returns undefined for an unknown account', async () => {
    expect(await findAccount(getDatabase().db, 'acct_unknown')).toBeUndefined();
  });

  it('lists accounts oldest first with numeric times', async () => {
    clock.advance(1000);
    const later = await createAccount(getDatabase().db, clock, { name: 'later' });
    const all = await listAccounts(getDatabase().db);
    expect(all.at(-1)).toEqual(later);
    for (const account of all) expect(typeof account.createdAt).toBe('number');
  });
});
