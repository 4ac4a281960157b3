import type { Logger } from 'pino';
import { CHANNEL, isGatewayMessage, type PrimaryMessage, type WorkerMessage } from './messages.js';

/** One worker process as the supervisor sees it (node:cluster's `Worker`, or a fake in tests). */
export interface WorkerProcess {
  readonly pid: number | undefined;
  /** Dropped when the worker is gone. */
  send(message: PrimaryMessage): void;
  /** SIGKILL. */
  kill(): void;
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
}

export interface RestartPolicy {
  /** Delay before restarting a worker that exited; doubles with each quick exit of its slot in a row. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A worker that ran at least this long starts its slot's doubling afresh. */
  stableAfterMs: number;
  /**
   * Workers exiting before they listen this many times in a row (any slots): give up. Default: twice the
   * number of workers, so a failure that hits every worker (a port in use) gets one round of restarts.
   */
  maxStartFailures?: number;
}

const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 250,
  maxDelayMs: 15_000,
  stableAfterMs: 30_000,
};

/** After SHUTDOWN_TIMEOUT_MS, how long workers get to close their dependencies before they are killed. */
const DEFAULT_KILL_GRACE_MS = 600;

export interface SupervisorOptions {
  count: number;
  fork(slot: number): WorkerProcess;
  logger: Logger;
  /** The workers' SHUTDOWN_TIMEOUT_MS: after it plus `killGraceMs`, workers still running are killed. */
  shutdownTimeoutMs: number;
  killGraceMs?: number;
  restart?: Partial<RestartPolicy>;
  /** Once, when every worker of the first start listens: their URL. */
  onListening?(url: string): void;
  /** A worker's message the supervisor does not handle itself (the status relay). */
  onMessage?(slot: number, message: WorkerMessage): void;
  /** A slot's worker exited: what was asked of it will not be answered. */
  onWorkerGone?(slot: number): void;
  now?: () => number;
}

export interface Supervisor {
  /** The primary's exit code once every worker is gone: 0 after a clean stop, else 1. */
  readonly done: Promise<number>;
  /** Graceful: every worker finishes its requests and exits (SIGTERM/SIGINT to the primary). */
  stop(): void;
  /** At once (a second signal): kills every worker. */
  kill(): void;
  send(slot: number, message: PrimaryMessage): void;
  /**
   * The slots whose worker runs now and hears the primary (it has joined). A worker still loading its
   * modules has served nothing yet; asking it would wait until it has.
   */
  joinedSlots(): number[];
}

interface Slot {
  worker: WorkerProcess | undefined;
  startedAt: number;
  /** The worker listens for the primary's messages (it said `joined`); until then they wait in `queued`. */
  joined: boolean;
  queued: PrimaryMessage[];
  listening: boolean;
  /** Exits in a row that came before `stableAfterMs`. */
  quickExits: number;
  restartTimer: NodeJS.Timeout | undefined;
}

/** Messages kept for a slot whose worker has not joined yet; beyond this the oldest are dropped. */
const QUEUE_LIMIT = 100;

/**
 * Runs `count` workers, one per slot: restarts a worker that exits (after a delay that doubles while its
 * slot keeps failing quickly), gives up when workers keep exiting before they listen (a port in use, a
 * database that refuses), and on `stop` lets each worker drain (it does its own graceful shutdown) and
 * kills what is left after SHUTDOWN_TIMEOUT_MS plus a grace.
 */
export function superviseWorkers(options: SupervisorOptions): Supervisor {
  const policy = { ...DEFAULT_RESTART_POLICY, maxStartFailures: 2 * options.count, ...options.restart };
  const { logger } = options;
  const now = options.now ?? Date.now;
  const slots = new Map<number, Slot>();
  let startFailures = 0;
  let stopping = false;
  let failed = false;
  let announced = false;
  let killTimer: NodeJS.Timeout | undefined;
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    finish = resolve;
  });

  const live = () => [...slots.values()].filter((slot) => slot.worker !== undefined);

  function start(slotNumber: number): void {
    const slot = slots.get(slotNumber)!;
    slot.restartTimer = undefined;
    const worker = options.fork(slotNumber);
    Object.assign(slot, { worker, startedAt: now(), joined: false, listening: false });
    logger.info({ child: { worker: slotNumber, pid: worker.pid } }, 'worker started');
    worker.onMessage((message) => {
      if (!isGatewayMessage<WorkerMessage>(message) || slot.worker !== worker) return;
      if (message.type === 'joined') {
        slot.joined = true;
        for (const queued of slot.queued.splice(0)) worker.send(queued);
        return;
      }
      if (message.type === 'listening') {
        slot.listening = true;
        startFailures = 0;
        if (!announced && !stopping && [...slots.values()].every((s) => s.listening)) {
          announced = true;
          options.onListening?.(message.url);
        }
        return;
      }
      options.onMessage?.(slotNumber, message);
    });
    worker.onExit((code, signal) => exited(slotNumber, worker, code, signal));
  }

  function exited(
    slotNumber: number,
    worker: WorkerProcess,
    code: number | null,
    signal: string | null,
  ): void {
    const slot = slots.get(slotNumber)!;
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    options.onWorkerGone?.(slotNumber);
    const child = { worker: slotNumber, pid: worker.pid, code, signal };
    if (stopping) {
      if (code !== 0) failed = true;
      logger.info({ child }, 'worker stopped');
      finishWhenAllGone();
      return;
    }
    if (!slot.listening) startFailures += 1;
    if (startFailures >= policy.maxStartFailures) {
      logger.error(
        { child, start_failures: startFailures },
        'workers keep exiting before they listen; giving up',
      );
      failed = true;
      stop();
      return;
    }
    const ranMs = now() - slot.startedAt;
    slot.quickExits = ranMs < policy.stableAfterMs ? slot.quickExits + 1 : 1;
    const delayMs = Math.min(policy.initialDelayMs * 2 ** (slot.quickExits - 1), policy.maxDelayMs);
    logger.warn({ child, ran_ms: ranMs, restart_in_ms: delayMs }, 'worker exited; restarting it');
    slot.restartTimer = setTimeout(() => start(slotNumber), delayMs);
  }

  /**
   * A worker hears the primary only once it has joined the cluster (src/cluster/worker.ts): Node drops a
   * message that reaches a process with no listener for it, so a stop sent to a worker still loading its
   * modules would be lost and the worker would run on until killed. What is sent before that waits for
   * the slot's worker to join.
   */
  function deliver(slot: Slot, message: PrimaryMessage): void {
    if (slot.worker !== undefined && slot.joined) {
      slot.worker.send(message);
      return;
    }
    if (slot.queued.length >= QUEUE_LIMIT) slot.queued.shift();
    slot.queued.push(message);
  }

  function finishWhenAllGone(): void {
    if (!stopping || live().length > 0) return;
    clearTimeout(killTimer);
    finish(failed ? 1 : 0);
  }

  function stop(): void {
    if (stopping) return;
    stopping = true;
    for (const slot of slots.values()) {
      clearTimeout(slot.restartTimer);
      if (slot.worker !== undefined) deliver(slot, { channel: CHANNEL, type: 'shutdown' });
    }
    const limitMs = options.shutdownTimeoutMs + (options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    killTimer = setTimeout(() => {
      for (const [slotNumber, slot] of slots) {
        if (slot.worker === undefined) continue;
        logger.warn(
          { child: { worker: slotNumber, pid: slot.worker.pid } },
          'worker still running; killing it',
        );
        failed = true;
        slot.worker.kill();
      }
    }, limitMs);
    finishWhenAllGone();
  }

  for (let slot = 1; slot <= options.count; slot++) {
    slots.set(slot, {
      worker: undefined,
      startedAt: 0,
      joined: false,
      queued: [],
      listening: false,
      quickExits: 0,
      restartTimer: undefined,
    });
  }
  for (const slot of slots.keys()) start(slot);

  return {
    done,
    stop,
    kill() {
      stop();
      failed = true;
      for (const slot of slots.values()) slot.worker?.kill();
    },
    send(slotNumber, message) {
      const slot = slots.get(slotNumber);
      if (slot !== undefined) deliver(slot, message);
    },
    joinedSlots: () =>
      [...slots].filter(([, slot]) => slot.worker !== undefined && slot.joined).map(([number]) => number),
  };
}
