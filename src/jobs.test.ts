import { expect, it } from 'vitest';
import { describeEachDialect } from '../test/db.js';
import { loadConfig } from './config.js';
import { IDEMPOTENCY_TTL_MS } from './http/idempotency-rules.js';
import { periodicJobs } from './jobs.js';
import { manualClock } from './lib/clock.js';
import type { PeriodicJob } from './lib/periodic.js';
import { createAccount } from './store/accounts.js';
import { claimIdempotencyKey } from './store/idempotency.js';
import { recordEvent } from './webhooks/events/record.js';

const DAY_MS = 86_400_000;

const byName = (jobs: PeriodicJob[], name: string) => {
  const job = jobs.find((j) => j.name === name);
  if (job === undefined) throw new Error(`no job "${name}"`);
  return job;
};

describeEachDialect('periodicJobs', (getDatabase) => {
  it('lists the idempotency purge, the webhook pruning and the status jobs, each at its configured interval', () => {
    const config = loadConfig({ IDEMPOTENCY_PURGE_INTERVAL_MS: '2000', WEBHOOK_PRUNE_INTERVAL_MS: '3000' });
    const probe: PeriodicJob = { name: 'wholesaler probe round', intervalMs: 4_000, run: () => {} };
    const jobs = periodicJobs({ config, database: getDatabase(), clock: manualClock(), statusJobs: [probe] });
    expect(jobs.map((j) => [j.name, j.intervalMs])).toEqual([
      ['purging expired idempotency keys', 2_000],
      ['pruning webhook history', 3_000],
      ['wholesaler probe round', 4_000],
    ]);
  });

  it('defaults to a purge every 10 minutes and pruning every hour, as before the jobs had settings', () => {
    const jobs = periodicJobs({
      config: loadConfig({}),
      database: getDatabase(),
      clock: manualClock(),
      statusJobs: [],
    });
    expect(jobs.map((j) => j.intervalMs)).toEqual([600_000, 3_600_000]);
  });

  it('leaves the webhook history to the processes that run the webhook worker', () => {
    const config = loadConfig({ WEBHOOK_WORKER_ENABLED: 'false' });
    const jobs = periodicJobs({ config, database: getDatabase(), clock: manualClock(), statusJobs: [] });
    expect(jobs.map((j) => j.name)).toEqual(['purging expired idempotency keys']);
  });

  it('purges idempotency keys older than 24 hours, and only those', async () => {
    const database = getDatabase();
    const clock = manualClock();
    const account = await createAccount(database.db, clock, { name: 'Apotheke am Markt' });
    const claim = (keyHash: string) =>
      claimIdempotencyKey(database.db, clock, {
        scope: { apiKeyId: 'key_1', accountId: account.id, keyHash },
        fingerprint: 'f',
        requestId: 'req_1',
        lockMs: 1_000,
        ttlMs: IDEMPOTENCY_TTL_MS,
      });
    await claim('old');
    clock.advance(IDEMPOTENCY_TTL_MS / 2);
    await claim('young');
    clock.advance(IDEMPOTENCY_TTL_MS / 2 + 1);
    const jobs = periodicJobs({ config: loadConfig({}), database, clock, statusJobs: [] });
    await byName(jobs, 'purging expired idempotency keys').run();
    const left = await database.db
      .selectFrom('idempotency_keys')
      .select('key_hash')
      .where('account_id', '=', account.id)
      .execute();
    expect(left.map((r) => r.key_hash)).toEqual(['young']);
  });

  it('prunes webhook events older than WEBHOOK_RETENTION_DAYS, and keeps younger ones', async () => {
    const database = getDatabase();
    const clock = manualClock();
    const account = await createAccount(database.db, clock, { name: 'Apotheke am Markt' });
    const record = (wholesaler: string) =>
      recordEvent(
        database.db,
        { accountId: account.id, mode: 'test', type: 'delivery.received', wholesaler, data: {} },
        { clock },
      );
    await record('phoenix');
    clock.advance(2 * DAY_MS);
    await record('gehe');
    clock.advance(1 * DAY_MS + 1);
    const config = loadConfig({ WEBHOOK_RETENTION_DAYS: '3' });
    const jobs = periodicJobs({ config, database, clock, statusJobs: [] });
    await byName(jobs, 'pruning webhook history').run();
    const left = await database.db
      .selectFrom('webhook_events')
      .select('wholesaler')
      .where('account_id', '=', account.id)
      .execute();
    expect(left.map((r) => r.wholesaler)).toEqual(['gehe']);
  });
});
