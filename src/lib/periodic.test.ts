import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { capturingLogger } from '../../test/logger.js';
import { type PeriodicJob, schedulePeriodicJobs } from './periodic.js';

/** A job whose runs end only when the test says so. */
function heldJob(name: string, intervalMs: number) {
  const ends: (() => void)[] = [];
  let runs = 0;
  const job: PeriodicJob = {
    name,
    intervalMs,
    run: () => {
      runs++;
      return new Promise<void>((resolve) => ends.push(resolve));
    },
  };
  return {
    job,
    runs: () => runs,
    finishAll: () => {
      for (const end of ends.splice(0)) end();
    },
  };
}

describe('schedulePeriodicJobs', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs each job once per interval, the first run after one interval', async () => {
    let fast = 0;
    let slow = 0;
    const jobs = schedulePeriodicJobs(
      [
        { name: 'fast', intervalMs: 100, run: () => fast++ },
        { name: 'slow', intervalMs: 1_000, run: async () => slow++ },
      ],
      capturingLogger().logger,
    );
    jobs.start();
    jobs.start(); // a second start adds no timers
    expect([fast, slow]).toEqual([0, 0]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect([fast, slow]).toEqual([10, 1]);
    await jobs.stop();
  });

  it('never overlaps two runs of a job: a turn while the last run still goes is skipped', async () => {
    const held = heldJob('held', 100);
    const jobs = schedulePeriodicJobs([held.job], capturingLogger().logger);
    jobs.start();
    await vi.advanceTimersByTimeAsync(550);
    expect(held.runs()).toBe(1);
    held.finishAll();
    await vi.advanceTimersByTimeAsync(100);
    expect(held.runs()).toBe(2);
    held.finishAll();
    await jobs.stop();
  });

  it('logs a failed run with its name and runs the job again at the next turn', async () => {
    const { logger, lines } = capturingLogger();
    let runs = 0;
    const jobs = schedulePeriodicJobs(
      [
        {
          name: 'purging things',
          intervalMs: 100,
          run: async () => {
            runs++;
            throw new Error('database gone');
          },
        },
        {
          name: 'throwing at once',
          intervalMs: 100,
          run: () => {
            throw new Error('no promise at all');
          },
        },
      ],
      logger,
    );
    jobs.start();
    await vi.advanceTimersByTimeAsync(200);
    expect(runs).toBe(2);
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'purging things failed',
      'throwing at once failed',
      'purging things failed',
      'throwing at once failed',
    ]);
    expect(lines[0]).toMatchObject({
      job: 'purging things',
      err: { message: 'database gone' },
    });
    await jobs.stop();
  });

  it('stop waits for the runs in flight and starts no run after it', async () => {
    const held = heldJob('held', 100);
    const jobs = schedulePeriodicJobs([held.job], capturingLogger().logger);
    jobs.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(held.runs()).toBe(1);
    let stopped = false;
    const stopping = jobs.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stopped).toBe(false);
    held.finishAll();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(held.runs()).toBe(1);
    jobs.start(); // stopped for good
    await vi.advanceTimersByTimeAsync(1_000);
    expect(held.runs()).toBe(1);
  });

  it('leaves a job with interval 0 off, and its timers do not hold the process open', async () => {
    // Spied on the real setInterval: a spy on the fake one would be what useRealTimers puts back, and
    // the files after this one in the same worker (vitest.config.ts: isolate false) would get no timers.
    vi.useRealTimers();
    const spy = vi.spyOn(globalThis, 'setInterval');
    let runs = 0;
    const jobs = schedulePeriodicJobs(
      [
        { name: 'off', intervalMs: 0, run: () => runs++ },
        { name: 'on', intervalMs: 60_000, run: () => {} },
      ],
      capturingLogger().logger,
    );
    try {
      jobs.start();
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]![1]).toBe(60_000);
      const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
      expect(runs).toBe(0);
    } finally {
      spy.mockRestore();
      await jobs.stop();
    }
    expect(String(setInterval)).toMatch(/^function setInterval\(callback/);
  });
});
