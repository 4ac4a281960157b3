import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import { silentLogger } from '../../../test/logger.js';
import type { Tenant } from '../../core/caller.js';
import { createAddressPolicy } from '../../lib/address-policy.js';
import { manualClock } from '../../lib/clock.js';
import type { Dialect } from '../../store/database.js';
import type { WebhookSubscription } from '../../store/webhook-subscriptions.js';
import type { DeliverDeps } from '../delivery/deliver.js';
import { createWebhookHttpClient } from '../delivery/http-client.js';
import { listenForNotifications } from '../delivery/pg-listen.js';
import { createWebhookWorker, type WorkerDeps, type WorkerOptions } from '../delivery/worker.js';
import { NOTIFY_CHANNEL, recordEvent } from '../events/record.js';
import { newScope, sampleNotice, subscribe } from './fixtures.js';
import { type Receiver, startReceiver } from './receiver.js';

/** A private database, a manual clock, a receiver on 127.0.0.1 and a subscription to it. */
export interface Harness {
  database: TestDatabase;
  clock: ReturnType<typeof manualClock>;
  receiver: Receiver;
  scope: Tenant;
  subscription: WebhookSubscription;
  deliver: DeliverDeps;
  /** A worker on this database; PostgreSQL workers listen for NOTIFY. */
  worker(
    options?: Partial<WorkerOptions>,
    deps?: Partial<WorkerDeps>,
  ): ReturnType<typeof createWebhookWorker>;
  /** Records a delivery.received event for the harness's scope. */
  record(db?: TestDatabase['db']): ReturnType<typeof recordEvent>;
  deliveries(): Promise<
    {
      id: string;
      status: string;
      attempts: number;
      next_attempt_at: number | null;
      locked_by: string | null;
    }[]
  >;
  dispose(): Promise<void>;
}

export async function createHarness(
  dialect: Dialect,
  options: { random?: () => number } = {},
): Promise<Harness> {
  const database = await createTestDatabase(dialect);
  const clock = manualClock();
  const receiver = await startReceiver();
  const client = createWebhookHttpClient({
    timeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    addressPolicy: createAddressPolicy({ allowPrivateEndpoints: true }),
    connectionsPerOrigin: 16,
    now: () => clock.now(),
  });
  const deliver: DeliverDeps = {
    db: database.db,
    client,
    clock,
    userAgent: 'test',
    random: options.random ?? (() => 0.5),
  };
  const scope = await newScope(database.db);
  const subscription = await subscribe(database.db, scope, { url: receiver.url }, clock);
  const workers: ReturnType<typeof createWebhookWorker>[] = [];
  return {
    database,
    clock,
    receiver,
    scope,
    subscription,
    deliver,
    worker(workerOptions = {}, deps = {}) {
      const pool = database.pgPool;
      const worker = createWebhookWorker(
        {
          ...deliver,
          dialect,
          logger: silentLogger,
          listen:
            pool &&
            ((onNotify) => listenForNotifications(pool.options, NOTIFY_CHANNEL, onNotify, silentLogger)),
          ...deps,
        },
        { concurrency: 8, pollIntervalMs: 60_000, leaseMs: 30_000, ...workerOptions },
      );
      workers.push(worker);
      return worker;
    },
    record(db = database.db) {
      return recordEvent(
        db,
        {
          ...scope,
          type: 'delivery.received',
          wholesaler: 'phoenix',
          customerId: '4711',
          data: sampleNotice,
        },
        { clock },
      );
    },
    deliveries() {
      return database.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'status', 'attempts', 'next_attempt_at', 'locked_by'])
        .orderBy('created_at')
        .execute() as never;
    },
    async dispose() {
      await Promise.all(workers.map((w) => w.stop({ timeoutMs: 0 })));
      await client.close();
      await receiver.close();
      await database.dispose();
    },
  };
}
