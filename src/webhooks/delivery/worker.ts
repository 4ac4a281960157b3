import type { Logger } from 'pino';
import { randomToken } from '../../lib/ids.js';
import type { Dialect } from '../../store/database.js';
import { claimDueDeliveries, type DeliveryJob, releaseDeliveries } from '../../store/webhook-outbox.js';
import { createBatcher } from './batch.js';
import {
  type AttemptReport,
  type DeliverDeps,
  type MadeAttempt,
  makeAttempt,
  recordAttempts,
} from './deliver.js';

export interface WorkerOptions {
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /**
   * Attempts in flight at once towards one subscription (leases of every worker count), so one slow
   * receiver cannot hold every slot. Unset: no cap.
   */
  perSubscription?: number;
  /** Longest sleep when nothing wakes the worker. */
  pollIntervalMs: number;
  /** How long a claim reserves a delivery; a crashed worker's deliveries are taken over after it. */
  leaseMs: number;
}

export interface WorkerDeps extends DeliverDeps {
  dialect: Dialect;
  logger: Logger;
  /** Subscribes to commit notifications of other processes (PostgreSQL LISTEN); returns an unsubscribe. */
  listen?: (onNotify: () => void) => Promise<() => Promise<void>>;
  /** Reported after every attempt (tests, benchmarks). */
  onAttempt?: (report: AttemptReport) => void;
  /** Reported after every look for due deliveries, with how many it claimed (tests). */
  onLook?: (claimed: number) => void;
}

export interface WebhookWorker {
  /** Starts the loop; idempotent. */
  start(): void;
  /** Looks for due deliveries now (call after committing an event). */
  wake(): void;
  /**
   * Stops claiming, waits up to `timeoutMs` for attempts in flight, then aborts the rest and gives
   * their leases back so another worker can send them at once.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
  /** Without the loop: attempts everything due now, until nothing is due; returns the attempts made. */
  drain(): Promise<number>;
  readonly id: string;
  /** Between `start()` and `stop()` (readiness reports it). */
  readonly running: boolean;
}

const RECORD_RETRY_FIRST_MS = 100;
const RECORD_RETRY_MAX_MS = 5_000;

/** Resolves after `ms`, or at once when `abort` fires. */
function pause(ms: number, abort: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      abort.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    abort.addEventListener('abort', done, { once: true });
  });
}

/**
 * The outbox worker. One loop claims due deliveries in batches (up to the free slots, at most
 * `perSubscription` in flight per subscription), attempts each concurrently, and sleeps until woken
 * (`wake()`, a PostgreSQL NOTIFY), until half the slots are free again after a full batch, until a
 * subscription at its cap finishes an attempt, or until the poll interval passes.
 */
export function createWebhookWorker(deps: WorkerDeps, options: WorkerOptions): WebhookWorker {
  const id = `wrk_${randomToken(12)}`;
  let claims = 0;
  let running = false;
  let loop: Promise<void> | undefined;
  let saturated = false;
  /** A claim is waiting for the database: an attempt ending now may not be in what it sees. */
  let claiming = false;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  let unlisten: (() => Promise<void>) | undefined;
  let stopping: Promise<void> | undefined;
  /** Fires when stop() is called: ends the waits between retries of a failed record. */
  let stopRequested = new AbortController();
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  const inFlightPerSubscription = new Map<string, number>();

  const signal = () => {
    woken = true;
    wakeUp?.();
  };

  const recorder = createBatcher((made: MadeAttempt[]) => recordAttempts(deps, made), 256);

  const isCapped = (subscription: string) =>
    (inFlightPerSubscription.get(subscription) ?? 0) >= (options.perSubscription ?? Number.POSITIVE_INFINITY);

  function run(job: DeliveryJob): Promise<void> {
    const controller = new AbortController();
    const subscription = job.subscriptionId;
    inFlightPerSubscription.set(subscription, (inFlightPerSubscription.get(subscription) ?? 0) + 1);
    const done = makeAttempt(deps, job, 'schedule', controller.signal)
      .then(async (made) => {
        if (made === undefined) return releaseDeliveries(deps.db, job.token, [job.id]);
        const report = await recordUntilStored(made, controller.signal);
        if (report.deleted) {
          // Its subscription was deleted during the attempt: nothing left to record.
          deps.logger.debug(
            { delivery_id: job.id, subscription_id: subscription },
            'webhook delivery deleted during the attempt; result dropped',
          );
        } else if (report.leaseLost) {
          deps.logger.warn(
            { delivery_id: job.id },
            'webhook lease expired during the attempt; result not applied',
          );
        }
        deps.onAttempt?.(report);
      })
      .catch((err: unknown) => {
        // The lease runs out and another attempt follows; nothing is lost.
        deps.logger.error({ err, delivery_id: job.id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        inFlight.delete(job.id);
        const ofSubscription = inFlightPerSubscription.get(subscription) ?? 1;
        if (ofSubscription > 1) inFlightPerSubscription.set(subscription, ofSubscription - 1);
        else inFlightPerSubscription.delete(subscription);
        // After a full claim, claim again once half the slots are free (batches); after a claim the cap
        // cut short, as soon as a capped subscription ends an attempt (it may have more due). An attempt
        // that ends while a claim runs always asks for another look: that claim may still have counted
        // its lease against the cap, and no later end of an attempt might be capped to ask again.
        const wasCapped = ofSubscription >= (options.perSubscription ?? Number.POSITIVE_INFINITY);
        if (claiming || (saturated ? inFlight.size <= options.concurrency / 2 : wasCapped)) {
          saturated = false;
          signal();
        }
      });
    inFlight.set(job.id, { controller, done });
    return done;
  }

  /**
   * Records a made attempt, retrying while the database is unreachable (docs/resilience.md). Giving up at
   * once would leave the delivery leased for WEBHOOK_LEASE_MS: still counted against its subscription's
   * cap, so newer events of that subscription would wait, and then sent a second time. The lease stays
   * ours meanwhile (`locked_by`), so a late record still applies unless another worker took it over.
   * Throws only when the worker stops first.
   */
  async function recordUntilStored(made: MadeAttempt, abort: AbortSignal): Promise<AttemptReport> {
    for (let failures = 0; ; failures++) {
      try {
        return await recorder.submit(made);
      } catch (err) {
        const stopped = stopRequested.signal;
        if (!running || abort.aborted || stopped.aborted) throw err;
        if (failures === 0) {
          deps.logger.warn({ err, delivery_id: made.job.id }, 'recording a webhook attempt failed; retrying');
        }
        const delayMs = Math.min(RECORD_RETRY_MAX_MS, RECORD_RETRY_FIRST_MS * 2 ** failures);
        await pause(delayMs, AbortSignal.any([abort, stopped]));
      }
    }
  }

  async function claim(limit: number): Promise<DeliveryJob[]> {
    claims += 1;
    return claimDueDeliveries(deps.db, deps.dialect, {
      token: `${id}:${claims}`,
      now: deps.clock.now(),
      leaseMs: options.leaseMs,
      limit,
      ...(options.perSubscription === undefined ? {} : { perSubscription: options.perSubscription }),
    });
  }

  async function loopBody(): Promise<void> {
    while (running) {
      const free = options.concurrency - inFlight.size;
      let lookAgain = false;
      if (free > 0) {
        woken = false;
        try {
          claiming = true;
          const jobs = await claim(free);
          claiming = false; // in the same step as run(), so no attempt's end falls in between
          for (const job of jobs) run(job);
          deps.onLook?.(jobs.length);
          saturated = jobs.length === free;
          // A subscription that reached its cap may hide other subscriptions' due rows: look again.
          lookAgain = saturated || jobs.some((job) => isCapped(job.subscriptionId));
        } catch (err) {
          claiming = false;
          deps.logger.error({ err }, 'claiming webhook deliveries failed');
        }
      }
      if (!running) break;
      if (lookAgain && inFlight.size < options.concurrency) continue;
      // With every slot busy, only a freed slot (or the poll interval) ends the sleep; a wake stays noted.
      if (free <= 0 || !woken) await wokenOrAfter(options.pollIntervalMs);
    }
  }

  /** Resolves on the next wake (`signal`) or after `ms`, the poll interval, whichever comes first. */
  function wokenOrAfter(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = done;
    });
  }

  async function stopWorker(timeoutMs: number): Promise<void> {
    running = false;
    stopRequested.abort();
    signal();
    await loop;
    await unlisten?.().catch(() => {});
    unlisten = undefined;
    const pending = Promise.allSettled([...inFlight.values()].map((f) => f.done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      pending.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      for (const flight of inFlight.values()) flight.controller.abort();
      await pending;
    }
  }

  return {
    id,
    get running() {
      return running;
    },
    start() {
      if (running) return;
      running = true;
      stopping = undefined;
      stopRequested = new AbortController();
      loop = loopBody();
      deps
        .listen?.(signal)
        .then((stop) => {
          if (running) unlisten = stop;
          else void stop();
        })
        .catch((err: unknown) =>
          deps.logger.warn({ err }, 'webhook notifications unavailable; polling only'),
        );
    },
    wake: signal,
    stop(stopOptions) {
      stopping ??= stopWorker(stopOptions?.timeoutMs ?? 10_000);
      return stopping;
    },
    async drain() {
      let attempts = 0;
      for (;;) {
        const jobs = await claim(options.concurrency);
        if (jobs.length === 0) return attempts;
        attempts += jobs.length;
        await Promise.all(jobs.map(run));
      }
    },
  };
}
