import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { deliveryNoticeFixture } from '../services/deliveries/test-support/fixtures.js';
import { createAccount } from './accounts.js';
import {
  type CustomerScope,
  customerHash,
  findSeenNotice,
  findSeenNoticeByDocument,
  listSeenNotices,
  markNoticesConfirmed,
  type StoredNotice,
  saveSeenNotices,
  UnknownCursorError,
} from './delivery-notices.js';

describe('customerHash', () => {
  it('is a stable hex digest that does not contain the user name', () => {
    const hash = customerHash('PLA\\apotheke1');
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(customerHash('PLA\\apotheke1'));
    expect(hash).not.toBe(customerHash('PLA\\apotheke2'));
  });
});

describeEachDialect('delivery notices repository', (getDatabase) => {
  const clock = manualClock();

  async function newScope(overrides: Partial<CustomerScope> = {}): Promise<CustomerScope> {
    const account = await createAccount(getDatabase().db, clock, { name: 'Apotheke' });
    return {
      accountId: account.id,
      mode: 'test',
      wholesaler: 'phoenix',
      customerHash: customerHash('apotheke1'),
      ...overrides,
    };
  }

  it('hands a notice to the first-sight handler once, however often it is seen', async () => {
    const { db } = getDatabase();
    const scope = await newScope();
    const firstSeen: string[] = [];
    const onFirstSight = async (_trx: unknown, stored: StoredNotice) => {
      firstSeen.push(stored.notice.deliveryNoteNumber);
    };
    const notice = deliveryNoticeFixture();
    await saveSeenNotices(db, clock, scope, [notice], onFirstSight);
    clock.advance(60_000);
    const [again] = await saveSeenNotices(db, clock, scope, [notice], onFirstSight);
    expect(firstSeen).toEqual(['LS-2025-000123']);
    expect(again).toMatchObject({
      firstSeenAt: clock.now() - 60_000,
      lastSeenAt: clock.now(),
      confirmedAt: null,
    });
    expect(again?.notice).toEqual(notice);
  });

  it('stores nothing when the first-sight handler fails, so the notice counts as new next time', async () => {
    const { db } = getDatabase();
    const scope = await newScope();
    const failing = async () => {
      throw new Error('event store down');
    };
    await expect(saveSeenNotices(db, clock, scope, [deliveryNoticeFixture()], failing)).rejects.toThrow(
      'event store down',
    );
    expect(await findSeenNotice(db, scope, 'LS-2025-000123')).toBeUndefined();
  });

  it('keeps notices of different customers, wholesalers and modes apart', async () => {
    const { db } = getDatabase();
    const a = await newScope();
    const scopes = [
      a,
      { ...a, customerHash: customerHash('apotheke2') },
      { ...a, wholesaler: 'phoenix_test' },
      { ...a, mode: 'live' as const },
    ];
    let handled = 0;
    for (const scope of scopes) {
      await saveSeenNotices(db, clock, scope, [deliveryNoticeFixture()], async () => {
        handled++;
      });
    }
    expect(handled).toBe(4);
    await markNoticesConfirmed(db, clock, a, ['LS-2025-000123']);
    expect((await findSeenNotice(db, a, 'LS-2025-000123'))?.confirmedAt).toBe(clock.now());
    for (const other of scopes.slice(1)) {
      expect((await findSeenNotice(db, other, 'LS-2025-000123'))?.confirmedAt).toBeNull();
      expect((await listSeenNotices(db, other, { limit: 10 })).notices).toHaveLength(1);
    }
  });

  it('keeps the first confirmation time and ignores numbers never seen', async () => {
    const { db } = getDatabase();
    const scope = await newScope();
    await saveSeenNotices(db, clock, scope, [deliveryNoticeFixture()], async () => {});
    await markNoticesConfirmed(db, clock, scope, ['LS-2025-000123', 'NEVER-SEEN']);
    const confirmedAt = clock.now();
    clock.advance(1000);
    await markNoticesConfirmed(db, clock, scope, ['LS-2025-000123']);
    expect((await findSeenNotice(db, scope, 'LS-2025-000123'))?.confirmedAt).toBe(confirmedAt);
    expect(await findSeenNotice(db, scope, 'NEVER-SEEN')).toBeUndefined();
  });

  it('finds a notice by its document id, case-insensitively', async () => {
    const { db } = getDatabase();
    const scope = await newScope();
    await saveSeenNotices(db, clock, scope, [deliveryNoticeFixture()], async () => {});
    const found = await findSeenNoticeByDocument(db, scope, '5B0F1F5E-8C1A-4F0E-9D3A-1C2B3D4E5F60');
    expect(found?.notice.deliveryNoteNumber).toBe('LS-2025-000123');
    expect(
      await findSeenNoticeByDocument(
        db,
        { ...scope, customerHash: customerHash('x') },
        found!.notice.documentId!,
      ),
    ).toBeUndefined();
  });

  it('pages newest document date first, with a cursor and inclusive date bounds', async () => {
    const { db } = getDatabase();
    const scope = await newScope();
    const notices = [
      deliveryNoticeFixture({ deliveryNoteNumber: 'A1', documentDate: '2025-03-01' }),
      deliveryNoticeFixture({ deliveryNoteNumber: 'B1', documentDate: '2025-03-02+01:00' }),
      deliveryNoticeFixture({ deliveryNoteNumber: 'B2', documentDate: '2025-03-02' }),
      deliveryNoticeFixture({ deliveryNoteNumber: 'C1', documentDate: '2025-03-03' }),
    ];
    await saveSeenNotices(db, clock, scope, notices, async () => {});
    const numbers = (page: { notices: StoredNotice[] }) =>
      page.notices.map((n) => n.notice.deliveryNoteNumber);

    const first = await listSeenNotices(db, scope, { limit: 2 });
    expect(numbers(first)).toEqual(['C1', 'B2']);
    expect(first.hasMore).toBe(true);
    const second = await listSeenNotices(db, scope, { limit: 2, startingAfter: 'B2' });
    expect(numbers(second)).toEqual(['B1', 'A1']);
    expect(second.hasMore).toBe(false);

    const bounded = await listSeenNotices(db, scope, {
      limit: 10,
      dateFrom: '2025-03-02',
      dateTo: '2025-03-02',
    });
    expect(numbers(bounded)).toEqual(['B2', 'B1']);
  });

  it('refuses a cursor this customer has not seen', async () => {
    const { db } = getDatabase();
    const scope = await newScope();
    await expect(listSeenNotices(db, scope, { limit: 1, startingAfter: 'LS-OTHER' })).rejects.toBeInstanceOf(
      UnknownCursorError,
    );
  });
});
