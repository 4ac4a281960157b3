import { availableParallelism } from 'node:os';
import type { Config } from '../config.js';

/**
 * Set by the primary in each worker's environment: the worker's slot, 1 to WORKERS. A restarted worker
 * takes the slot of the one it replaces, so log lines keep one `worker` per slot.
 */
export const WORKER_SLOT_ENV = 'MSV3_GATEWAY_WORKER';

/** WORKERS as a count: `auto` and 0 mean one per CPU core this process may use. */
export function workerCount(setting: Config['server']['workers'], cores = availableParallelism()): number {
  return setting === 'auto' || setting === 0 ? Math.max(1, cores) : setting;
}

/**
 * This process's slot when it is a worker forked by our primary (`isWorker`: node:cluster's); undefined
 * otherwise, also in a cluster someone else runs (pm2's cluster mode), whose workers are single gateways.
 */
export function workerSlot(env: NodeJS.ProcessEnv, isWorker: boolean): number | undefined {
  const slot = Number(env[WORKER_SLOT_ENV]);
  return isWorker && Number.isInteger(slot) && slot >= 1 ? slot : undefined;
}
