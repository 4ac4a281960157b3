import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../test/db.js';
import { loadConfig } from './config.js';
import { createLogger } from './observability/logger.js';
import { createMetrics } from './observability/metrics.js';
import { buildDependencies } from './wiring.js';

describe('buildDependencies', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-wiring-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const logger = createLogger({ level: 'silent' });

  it('opens everything in start order and hands it back to be closed newest first', async () => {
    const config = loadConfig({ DATABASE_URL: `sqlite:${join(folder, 'gateway.db')}` });
    const wired = await buildDependencies(config, { logger, metrics: createMetrics() });
    try {
      expect(wired.opened.map((o) => o.name)).toEqual([
        'periodic jobs',
        'wholesaler probes',
        'webhook worker',
        'wholesaler connections',
        'sandbox wholesaler',
        'rate limiter',
        'tracing',
        'database',
      ]);
      expect(wired.firstKey?.secret).toMatch(/^pk_test_/);
      // The sandbox mock answers on loopback (a GET is not SOAP: any HTTP answer will do).
      expect(wired.sandboxUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(wired.sandboxUrl)).status).toBeGreaterThanOrEqual(200);
    } finally {
      for (const resource of wired.opened) await resource.close();
    }
    await expect(wired.deps.database.db.selectFrom('accounts').selectAll().execute()).rejects.toThrow();
  });

  it('leaves a given database to its owner, starts no sandbox for a given URL and no watch when told', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const config = loadConfig({ DATABASE_URL: 'sqlite::memory:' });
      const wired = await buildDependencies(config, {
        logger,
        database,
        metrics: createMetrics(),
        sandboxUrl: 'http://127.0.0.1:9',
        watchStatus: null,
      });
      expect(wired.firstKey).toBeUndefined();
      expect(wired.sandboxUrl).toBe('http://127.0.0.1:9');
      expect(wired.opened.map((o) => o.name)).toEqual([
        'periodic jobs',
        'webhook worker',
        'wholesaler connections',
        'rate limiter',
        'tracing',
      ]);
      for (const resource of wired.opened) await resource.close();
      // Still open, and without a first key: the caller's database, prepared by the caller.
      expect(await database.db.selectFrom('api_keys').selectAll().execute()).toEqual([]);
    } finally {
      await database.dispose();
    }
  });
});
