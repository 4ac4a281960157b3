import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { manualClock } from '../lib/clock.js';
import { createAccount } from './accounts.js';
import {
  type ClaimInput,
  claimIdempotencyKey,
  completeIdempotencyKey,
  extendIdempotencyLock,
  findIdempotencyRecord,
  type IdempotencyScope,
  purgeExpiredIdempotencyKeys,
  releaseIdempotencyKey,
  reopenIdempotencyKey,
} from './idempotency.js';

const DAY = 24 * 60 * 60 * 1000;
const LOCK = 60_000;
let counter = 0;

describeEachDialect('idempotency records', (getDatabase) => {
  const clock = manualClock();

  async function freshScope(): Promise<IdempotencyScope> {
    const account = await createAccount(getDatabase().db, clock, { name: 'Apotheke' });
    counter += 1;
    const keyHash = createHash('sha256').update(`key-${counter}-${Math.random()}`).digest('hex');
    return { apiKeyId: `key_${counter}`, accountId: account.id, keyHash };
  }

  function claimInput(scope: IdempotencyScope, fingerprint = 'fp-a'): ClaimInput {
    return { scope, fingerprint, requestId: 'req_first', lockMs: LOCK, ttlMs: DAY };
  }

  it('lets exactly one of two simultaneous claims win', async () => {
    const scope = await freshScope();
    const results = await Promise.all([
      claimIdempotencyKey(getDatabase().db, clock, claimInput(scope)),
      claimIdempotencyKey(getDatabase().db, clock, claimInput(scope)),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['claimed', 'in_progress']);
  });

  it('replays a completed outcome and refuses a different fingerprint', async () => {
    const { db } = getDatabase();
    const scope = await freshScope();
    const claim = await claimIdempotencyKey(db, clock, claimInput(scope));
    if (claim.kind !== 'claimed') throw new Error('expected a claim');
    const response = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    expect(await completeIdempotencyKey(db, clock, scope, claim.lockToken, response)).toBe(true);

    expect(await claimIdempotencyKey(db, clock, claimInput(scope))).toEqual({
      kind: 'replay',
      response,
      originalRequestId: 'req_first',
    });
    expect((await claimIdempotencyKey(db, clock, claimInput(scope, 'fp-b'))).kind).toBe('mismatch');
  });

  it('lets a later execution take over once the lock of a crashed one has expired', async () => {
    const { db } = getDatabase();
    const scope = await freshScope();
    const first = await claimIdempotencyKey(db, clock, claimInput(scope));
    if (first.kind !== 'claimed') throw new Error('expected a claim');
    clock.advance(LOCK - 1);
    expect((await claimIdempotencyKey(db, clock, claimInput(scope))).kind).toBe('in_progress');

    clock.advance(1);
    const second = await claimIdempotencyKey(db, clock, claimInput(scope));
    expect(second).toMatchObject({ kind: 'claimed', attempt: 2, firstUsedAt: first.firstUsedAt });
    // The crashed holder lost its lock: it can neither finish nor extend.
    const late = { status: 200, headers: {}, body: 'late' };
    expect(await completeIdempotencyKey(db, clock, scope, first.lockToken, late)).toBe(false);
    expect(await extendIdempotencyLock(db, clock, scope, first.lockToken, LOCK)).toBe(false);
  });

  it('keeps a heartbeating lock alive beyond the lock timeout', async () => {
    const { db } = getDatabase();
    const scope = await freshScope();
    const claim = await claimIdempotencyKey(db, clock, claimInput(scope));
    if (claim.kind !== 'claimed') throw new Error('expected a claim');
    clock.advance(LOCK / 2);
    expect(await extendIdempotencyLock(db, clock, scope, claim.lockToken, LOCK)).toBe(true);
    clock.advance(LOCK / 2 + 1);
    expect((await claimIdempotencyKey(db, clock, claimInput(scope))).kind).toBe('in_progress');
  });

  it('frees a released key for any request', async () => {
    const { db } = getDatabase();
    const scope = await freshScope();
    const claim = await claimIdempotencyKey(db, clock, claimInput(scope));
    if (claim.kind !== 'claimed') throw new Error('expected a claim');
    await releaseIdempotencyKey(db, scope, claim.lockToken);
    expect(await claimIdempotencyKey(db, clock, claimInput(scope, 'fp-other'))).toMatchObject({
      kind: 'claimed',
      attempt: 1,
    });
  });

  it('hands a reopened key to the next identical request at once, keeping its first use', async () => {
    const { db } = getDatabase();
    const scope = await freshScope();
    const first = await claimIdempotencyKey(db, clock, claimInput(scope));
    if (first.kind !== 'claimed') throw new Error('expected a claim');
    await reopenIdempotencyKey(db, scope, first.lockToken);
    clock.advance(5);
    expect((await claimIdempotencyKey(db, clock, claimInput(scope, 'fp-other'))).kind).toBe('mismatch');
    expect(await claimIdempotencyKey(db, clock, claimInput(scope))).toMatchObject({
      kind: 'claimed',
      attempt: 2,
      firstUsedAt: first.firstUsedAt,
    });
  });

  it('purges records after 24 hours and lets the key start a new request', async () => {
    const { db } = getDatabase();
    const scope = await freshScope();
    const claim = await claimIdempotencyKey(db, clock, claimInput(scope));
    if (claim.kind !== 'claimed') throw new Error('expected a claim');
    await completeIdempotencyKey(db, clock, scope, claim.lockToken, { status: 200, headers: {}, body: '{}' });

    clock.advance(DAY - 1);
    await purgeExpiredIdempotencyKeys(db, clock);
    expect(await findIdempotencyRecord(db, scope)).toBeDefined();

    clock.advance(1);
    expect(await purgeExpiredIdempotencyKeys(db, clock)).toBeGreaterThanOrEqual(1);
    expect(await findIdempotencyRecord(db, scope)).toBeUndefined();
  });

  it('treats an expired record that was not purged yet as gone', async () => {
    const { db } = getDatabase();
    const scope = await freshScope();
    const claim = await claimIdempotencyKey(db, clock, claimInput(scope));
    if (claim.kind !== 'claimed') throw new Error('expected a claim');
    await completeIdempotencyKey(db, clock, scope, claim.lockToken, { status: 200, headers: {}, body: '{}' });
    clock.advance(DAY);
    expect(await claimIdempotencyKey(db, clock, claimInput(scope, 'fp-new'))).toMatchObject({
      kind: 'claimed',
      attempt: 1,
      firstUsedAt: clock.now(),
    });
  });
});
