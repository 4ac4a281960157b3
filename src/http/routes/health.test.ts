import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import type { AppDeps } from '../app-deps.js';
import type { GatewayApp } from '../types.js';

describe('health: liveness and readiness', () => {
  let database: TestDatabase;
  let app: GatewayApp;
  let deps: AppDeps;

  beforeEach(async () => {
    database = await createTestDatabase('sqlite');
    ({ app, deps } = await buildTestApp(database));
  });
  afterEach(async () => {
    deps.webhooks.worker.stop().catch(() => {});
    await app.close();
    await database.dispose();
  });

  const ready = () => app.inject({ url: '/v1/health/ready' });

  it('is ready, without an API key, when the database answers, migrations are applied and the worker runs', async () => {
    deps.webhooks.worker.start();
    const answer = await ready();
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({
      status: 'ready',
      checks: { database: 'ok', migrations: 'ok', webhook_worker: 'running' },
    });
  });

  it('is not ready while the webhook worker is stopped, and says so with Retry-After', async () => {
    const answer = await ready();
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.json()).toMatchObject({
      error: 'service_unavailable',
      message: 'Not ready: the webhook worker is not running.',
    });
  });

  it('answers a probe the drain began under as the drain answers, not as a stopped webhook worker', async () => {
    deps.webhooks.worker.start();
    // SIGTERM arrives while the probe checks: the drain begins and the webhook worker stops with it.
    Object.defineProperty(deps.webhooks.worker, 'running', {
      configurable: true,
      get: () => {
        void app.drain();
        return false;
      },
    });
    const answer = await ready();
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.headers.connection).toBe('close');
    expect(answer.json()).toMatchObject({
      error: 'service_unavailable',
      message: 'The gateway is shutting down; retry the request.',
    });
  });

  it('names a migration that is not applied', async () => {
    deps.webhooks.worker.start();
    const { rows } = await sql<{
      name: string;
    }>`select name from kysely_migration order by name desc limit 1`.execute(database.db);
    await sql`delete from kysely_migration where name = ${rows[0]!.name}`.execute(database.db);
    const answer = await ready();
    expect(answer.statusCode).toBe(503);
    expect(answer.json().message).toBe(`Not ready: migrations not applied: ${rows[0]!.name}.`);
  });

  it('is not ready when the database is gone, while liveness still answers', async () => {
    deps.webhooks.worker.start();
    await deps.webhooks.worker.stop();
    deps.webhooks.worker.start();
    await database.close();
    const answer = await ready();
    expect(answer.statusCode).toBe(503);
    expect(answer.json().message).toContain('the database does not answer');
    expect((await app.inject({ url: '/v1/health' })).statusCode).toBe(200);
  });
});
