import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { SignalSource } from '../held-signals.js';
import { systemClock } from '../lib/clock.js';
import { serveClusterRateLimits } from '../ratelimit/cluster.js';
import { budgetsFrom, resolveRateLimitStore } from '../ratelimit/create.js';
import { reportStartup } from '../startup-summary.js';
import { openGatewayDatabase, prepareDatabase, startSandbox } from '../wiring.js';
import { CHANNEL } from './messages.js';
import { createMetricsGatherer } from './metrics-relay.js';
import { WORKER_SLOT_ENV } from './role.js';
import { ANNOUNCER_SLOT } from './status-relay.js';
import { type RestartPolicy, superviseWorkers, type WorkerProcess } from './supervisor.js';

export interface PrimaryOptions {
  config: Config;
  /** How many workers (WORKERS resolved, more than 1). */
  workers: number;
  /** The environment the workers inherit (plus their slot, SANDBOX_URL and CREATE_FIRST_KEY=false). */
  env: NodeJS.ProcessEnv;
  /** Lines carry `worker: 0`. */
  logger: Logger;
  /** Human-readable lines (stderr in the CLI), as `startServer` prints them. */
  print(line: string): void;
  /** The first start's key lines (stdout in the CLI). */
  printSecret(line: string): void;
  restart?: Partial<RestartPolicy>;
  /** SIGTERM and SIGINT, caught from the start of `serve` (src/held-signals.ts). */
  signals: SignalSource;
}

/**
 * The primary of WORKERS > 1 (docs/operating.md "All cores: WORKERS"). It does, once, what must happen
 * once: migrations and the first key, the in-memory rate-limit budgets shared by all workers, the one
 * sandbox mock every worker calls (SANDBOX_URL); then forks the workers, which share the port
 * (node:cluster), relays status messages to the announcer worker, restarts workers that die and stops
 * them all on SIGTERM/SIGINT. Resolves to the process's exit code. It serves no HTTP itself.
 */
export async function runPrimary(options: PrimaryOptions): Promise<number> {
  const { config, logger } = options;
  // The same steps as a single process's start (src/wiring.ts), done once for all workers.
  const database = await openGatewayDatabase(config, logger);
  let firstKey: { accountId: string; secret: string } | undefined;
  let sandbox: { url: string; close?: () => Promise<void> };
  try {
    firstKey = await prepareDatabase(config, database, { clock: systemClock, logger });
    // The one sandbox every worker calls keeps its state in the gateway's database (docs/sandbox.md).
    sandbox = await startSandbox(config, { clock: systemClock, database });
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  const rateLimits =
    resolveRateLimitStore(config, { dialect: database.dialect }) === 'memory'
      ? serveClusterRateLimits(budgetsFrom(config))
      : undefined;
  const sandboxUrl = sandbox.url;
  const workerEnv = { ...options.env, SANDBOX_URL: sandboxUrl, CREATE_FIRST_KEY: 'false' };

  const supervisor = superviseWorkers({
    count: options.workers,
    fork: (slot) => forkWorker({ ...workerEnv, [WORKER_SLOT_ENV]: String(slot) }, logger),
    logger,
    shutdownTimeoutMs: config.server.shutdownTimeoutMs,
    restart: options.restart,
    onListening(url) {
      const { print, printSecret, workers } = options;
      const report = { config, database, clock: systemClock, url, sandboxUrl, workers, firstKey, logger };
      void reportStartup({ ...report, print, printSecret });
    },
    onMessage(slot, message) {
      switch (message.type) {
        case 'status-change':
        case 'endpoints-in-use':
          if (slot !== ANNOUNCER_SLOT) supervisor.send(ANNOUNCER_SLOT, { ...message, from: slot });
          return;
        case 'rate-limit':
          // Unanswered, the worker counts the batch itself after its timeout.
          rateLimits?.answer(message).then(
            (decisions) =>
              supervisor.send(slot, {
                channel: CHANNEL,
                type: 'rate-limit-answers',
                batch: message.batch,
                decisions,
              }),
            (err: unknown) => logger.warn({ err }, 'rate-limit batch not counted'),
          );
          return;
        case 'metrics-request':
          metrics.request(slot, message.id);
          return;
        case 'metrics-part':
          metrics.receive(slot, message.id, message.metrics);
          return;
        case 'wholesalers-request':
          metrics.request(slot, message.id, 'wholesalers');
          return;
        case 'wholesalers-part':
          metrics.receive(slot, message.id, message.status);
          return;
      }
    },
    onWorkerGone: (slot) => metrics.gone(slot),
  });
  const metrics = createMetricsGatherer({
    joinedSlots: () => supervisor.joinedSlots(),
    send: (slot, message) => supervisor.send(slot, message),
  });

  let signalled = false;
  let finished = false;
  // A signal held while the database and the sandbox were prepared arrives here at once: the workers
  // just forked are told to stop, and each does so as soon as it has started.
  const onSignal = (signal: NodeJS.Signals) => {
    if (finished) return; // the workers are gone; closing the sandbox and the database takes moments
    if (signalled) {
      logger.warn({ signal }, 'second signal; killing the workers');
      supervisor.kill();
      return;
    }
    signalled = true;
    logger.info({ signal }, 'shutting down the workers');
    supervisor.stop();
  };
  options.signals.on('SIGTERM', onSignal);
  options.signals.on('SIGINT', onSignal);
  const code = await supervisor.done;
  finished = true;
  await sandbox
    .close?.()
    .catch((err: unknown) => logger.warn({ err }, 'closing the sandbox wholesaler failed'));
  await database.close().catch((err: unknown) => logger.warn({ err }, 'closing the database failed'));
  logger.info({ code }, 'stopped');
  return code;
}

function forkWorker(env: NodeJS.ProcessEnv, logger: Logger): WorkerProcess {
  const worker: Worker = cluster.fork(env);
  // A worker gone between the check and the send (its exit is handled by the supervisor).
  worker.on('error', (err) =>
    logger.warn({ err, child: { pid: worker.process.pid } }, 'worker channel error'),
  );
  return {
    pid: worker.process.pid,
    send(message) {
      if (worker.isConnected()) worker.send(message, undefined, () => {});
    },
    kill: () => worker.process.kill('SIGKILL'),
    onMessage: (listener) => worker.on('message', listener),
    onExit: (listener) => worker.on('exit', listener),
  };
}
