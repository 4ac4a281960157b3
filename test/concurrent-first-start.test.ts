import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/database.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { createScratchPostgresDatabase, postgresUrl, warnSkipped } from './db.js';
import { killAndWait, startGatewayProcess } from './gateway-process.js';

/**
 * Several `serve` processes starting at the same moment on one new, empty database (a deployment that
 * starts its replicas together): every migration is applied once and the first start creates exactly
 * one account and one key, on SQLite and on PostgreSQL.
 */

const PROCESSES = 3;

describe('concurrent first starts on one empty database', () => {
  const children: ChildProcess[] = [];
  const cleanUps: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    await Promise.all(children.splice(0).map(killAndWait));
    for (const cleanUp of cleanUps.splice(0)) await cleanUp();
  });

  async function startTogether(url: string, extra: NodeJS.ProcessEnv = {}): Promise<void> {
    const env = { PATH: process.env.PATH, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'warn', ...extra };
    const started = await Promise.all(
      Array.from({ length: PROCESSES }, () => startGatewayProcess(env, children, 90_000)),
    );
    for (const gateway of started) expect((await fetch(`${gateway.url}/v1/health/ready`)).status).toBe(200);
  }

  async function counts(url: string) {
    const database = await openDatabase(url);
    try {
      const count = async (table: string) =>
        Number(
          (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(database.db))
            .rows[0]!.n,
        );
      const migrations = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
        database.db,
      );
      return {
        accounts: await count('accounts'),
        keys: await count('api_keys'),
        migrations: migrations.rows.map((r) => r.name),
      };
    } finally {
      await database.close();
    }
  }

  it(`creates one account and one key, and applies each migration once, with ${PROCESSES} processes on SQLite`, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'msv3-first-start-'));
    cleanUps.push(() => rmSync(folder, { recursive: true, force: true }));
    const url = `sqlite:${join(folder, 'gateway.db')}`;
    await startTogether(url);
    expect(await counts(url)).toEqual({ accounts: 1, keys: 1, migrations: Object.keys(MIGRATIONS) });
  }, 120_000);

  it('creates no key with CREATE_FIRST_KEY=false', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'msv3-first-start-'));
    cleanUps.push(() => rmSync(folder, { recursive: true, force: true }));
    const url = `sqlite:${join(folder, 'gateway.db')}`;
    await startTogether(url, { CREATE_FIRST_KEY: 'false' });
    expect(await counts(url)).toMatchObject({ accounts: 0, keys: 0 });
  }, 120_000);

  if (postgresUrl() === undefined) {
    warnSkipped('TEST_DATABASE_URL', 'PostgreSQL');
    it.skip('skipped: TEST_DATABASE_URL is not set, so concurrent first starts on PostgreSQL are not tested', () => {});
    return;
  }

  it(`creates one account and one key, and applies each migration once, with ${PROCESSES} processes on PostgreSQL`, async () => {
    const scratch = await createScratchPostgresDatabase();
    cleanUps.push(() => scratch.dispose());
    await startTogether(scratch.url);
    expect(await counts(scratch.url)).toEqual({ accounts: 1, keys: 1, migrations: Object.keys(MIGRATIONS) });
  }, 120_000);
});
