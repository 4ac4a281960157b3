import type { Logger } from 'pino';
/**
 * The one place where the gateway's periodic jobs are scheduled (the list: `src/jobs.ts`): purging
 * expired idempotency keys, pruning the webhook history, the wholesaler probe rounds. Each job runs one
 * at a time (a turn that comes while the previous run is still going is skipped), a failure is logged
 * and the next turn comes as usual, the timers never hold the process open, and `stop()` waits for the
 * runs in flight, so nothing touches the database after it.
 */
export interface PeriodicJob {
  /** What the job does, in a few words; a failure is logged as `<name> failed`. */
  name: string;
  /** Between two turns, in milliseconds (from the configuration); 0 turns the job off. */
  intervalMs: number;
  run(): unknown;
}

export interface PeriodicJobs {
  /** Starts every job's timer (the first run comes after one interval); does nothing when started. */
  start(): void;
  /** Stops the timers and waits for the runs in flight; no run starts after it. */
  stop(): Promise<void>;
}

export function schedulePeriodicJobs(jobs: readonly PeriodicJob[], logger: Logger): PeriodicJobs {
  const timers: NodeJS.Timeout[] = [];
  const running = new Map<PeriodicJob, Promise<void>>();
  let started = false;
  let stopped = false;

  const failed = (job: PeriodicJob) => (err: unknown) =>
    logger.warn({ err, job: job.name }, `${job.name} failed`);

  function turn(job: PeriodicJob): void {
    if (stopped || running.has(job)) return;
    let result: unknown;
    try {
      // Called at once, not in a later tick: what a job does without waiting is done when the timer fires.
      result = job.run();
    } catch (err) {
      failed(job)(err);
      return;
    }
    const run = Promise.resolve(result)
      .then(() => {}, failed(job))
      .finally(() => running.delete(job));
    running.set(job, run);
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      for (const job of jobs) {
        if (job.intervalMs <= 0) continue;
        const timer = setInterval(() => turn(job), job.intervalMs);
        timer.unref();
        timers.push(timer);
      }
    },
    async stop() {
      stopped = true;
      for (const timer of timers.splice(0)) clearInterval(timer);
      await Promise.all(running.values());
    },
  };
}
