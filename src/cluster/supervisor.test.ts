import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../test/logger.js';
import { CHANNEL, type PrimaryMessage } from './messages.js';
import { type SupervisorOptions, superviseWorkers, type WorkerProcess } from './supervisor.js';

/** A worker the test drives: it says it listens, sends messages and exits when told to. */
class FakeWorker implements WorkerProcess {
  readonly sent: PrimaryMessage[] = [];
  killed = false;
  joined = false;
  private messageListeners: ((message: unknown) => void)[] = [];
  private exitListeners: ((code: number | null, signal: string | null) => void)[] = [];

  constructor(
    readonly slot: number,
    readonly pid: number,
  ) {}

  send(message: PrimaryMessage): void {
    this.sent.push(message);
  }
  kill(): void {
    this.killed = true;
    this.exit(null, 'SIGKILL');
  }
  onMessage(listener: (message: unknown) => void): void {
    this.messageListeners.push(listener);
  }
  onExit(listener: (code: number | null, signal: string | null) => void): void {
    this.exitListeners.push(listener);
  }
  /** Listens for the primary's messages, as a worker does once its modules are loaded. */
  join(): void {
    this.joined = true;
    this.message({ channel: CHANNEL, type: 'joined' });
  }
  listen(url = 'http://127.0.0.1:8080'): void {
    if (!this.joined) this.join();
    this.message({ channel: CHANNEL, type: 'listening', url });
  }
  message(message: unknown): void {
    for (const listener of this.messageListeners) listener(message);
  }
  exit(code: number | null, signal: string | null = null): void {
    for (const listener of this.exitListeners) listener(code, signal);
  }
}

describe('superviseWorkers', () => {
  let forked: FakeWorker[];
  beforeEach(() => {
    vi.useFakeTimers();
    forked = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function supervise(options: Partial<SupervisorOptions> = {}) {
    return superviseWorkers({
      count: 2,
      fork: (slot) => {
        const worker = new FakeWorker(slot, 1000 + forked.length);
        forked.push(worker);
        return worker;
      },
      logger: silentLogger,
      shutdownTimeoutMs: 10_000,
      killGraceMs: 500,
      restart: { initialDelayMs: 100, maxDelayMs: 1_000, stableAfterMs: 5_000, maxStartFailures: 3 },
      now: () => Date.now(),
      ...options,
    });
  }
  const inSlot = (slot: number) => forked.filter((w) => w.slot === slot);

  it('announces the URL once, when every worker listens, and not again after a restart', () => {
    const onListening = vi.fn();
    supervise({ onListening });
    forked[0]!.listen();
    expect(onListening).not.toHaveBeenCalled();
    forked[1]!.listen('http://127.0.0.1:9999');
    expect(onListening).toHaveBeenCalledExactlyOnceWith('http://127.0.0.1:9999');
    forked[0]!.exit(1);
    vi.advanceTimersByTime(100);
    forked[2]!.listen();
    expect(onListening).toHaveBeenCalledTimes(1);
  });

  it('restarts a worker that exits in its slot, the delay doubling while the slot keeps failing quickly', () => {
    supervise();
    for (const worker of forked) worker.listen();
    inSlot(1)[0]!.exit(null, 'SIGKILL');
    vi.advanceTimersByTime(99);
    expect(inSlot(1)).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(inSlot(1)).toHaveLength(2);
    inSlot(1)[1]!.listen();
    inSlot(1)[1]!.exit(1);
    vi.advanceTimersByTime(199);
    expect(inSlot(1)).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(inSlot(1)).toHaveLength(3);
    // Ran longer than stableAfterMs: the next restart waits the initial delay again.
    inSlot(1)[2]!.listen();
    vi.advanceTimersByTime(6_000);
    inSlot(1)[2]!.exit(1);
    vi.advanceTimersByTime(100);
    expect(inSlot(1)).toHaveLength(4);
    expect(inSlot(2)).toHaveLength(1);
  });

  it('counts a slot as joined from its worker joining until it exits, and says when it is gone', () => {
    const onWorkerGone = vi.fn();
    const supervisor = supervise({ onWorkerGone });
    expect(supervisor.joinedSlots()).toEqual([]);
    forked[1]!.join();
    expect(supervisor.joinedSlots()).toEqual([2]);
    forked[0]!.listen();
    expect(supervisor.joinedSlots()).toEqual([1, 2]);
    inSlot(1)[0]!.exit(null, 'SIGKILL');
    expect(onWorkerGone).toHaveBeenCalledExactlyOnceWith(1);
    expect(supervisor.joinedSlots()).toEqual([2]);
    vi.advanceTimersByTime(100);
    // Restarted, still loading its modules: not asked until it has joined.
    expect(inSlot(1)).toHaveLength(2);
    expect(supervisor.joinedSlots()).toEqual([2]);
    inSlot(1)[1]!.join();
    expect(supervisor.joinedSlots()).toEqual([1, 2]);
  });

  it('never waits longer than the maximum delay', () => {
    supervise();
    for (let i = 0; i < 6; i++) {
      const current = inSlot(1).at(-1)!;
      current.listen();
      current.exit(1);
      vi.advanceTimersByTime(1_000);
    }
    expect(inSlot(1)).toHaveLength(7);
  });

  it('gives up with exit code 1 when workers keep exiting before they listen, and stops the others', async () => {
    const supervisor = supervise();
    forked[1]!.listen();
    inSlot(1)[0]!.exit(1);
    vi.advanceTimersByTime(100);
    inSlot(1)[1]!.exit(1);
    vi.advanceTimersByTime(200);
    expect(inSlot(2)[0]!.sent).toEqual([]);
    inSlot(1)[2]!.exit(1);
    expect(inSlot(2)[0]!.sent).toEqual([{ channel: CHANNEL, type: 'shutdown' }]);
    vi.advanceTimersByTime(60_000);
    expect(inSlot(1)).toHaveLength(3);
    inSlot(2)[0]!.exit(0);
    await expect(supervisor.done).resolves.toBe(1);
  });

  it('by default gives up after every worker failed at start twice', async () => {
    const supervisor = supervise({ restart: { initialDelayMs: 100 } });
    forked[0]!.exit(1);
    forked[1]!.exit(1);
    vi.advanceTimersByTime(100);
    expect(forked).toHaveLength(4);
    forked[2]!.exit(1);
    forked[3]!.exit(1);
    vi.advanceTimersByTime(60_000);
    expect(forked).toHaveLength(4);
    await expect(supervisor.done).resolves.toBe(1);
  });

  it('counts start failures only in a row: a worker that listens resets them', () => {
    supervise();
    for (let round = 0; round < 4; round++) {
      inSlot(1).at(-1)!.exit(1);
      vi.advanceTimersByTime(1_000);
      inSlot(1).at(-1)!.listen();
      inSlot(1).at(-1)!.exit(1);
      vi.advanceTimersByTime(1_000);
    }
    expect(inSlot(1)).toHaveLength(9);
    expect(forked.every((w) => w.sent.length === 0)).toBe(true);
  });

  it('on stop, tells every worker to shut down, restarts none, and resolves 0 when all exit 0', async () => {
    const supervisor = supervise();
    for (const worker of forked) worker.listen();
    forked[0]!.exit(1);
    supervisor.stop();
    vi.advanceTimersByTime(1_000);
    expect(forked).toHaveLength(2);
    expect(forked[1]!.sent).toEqual([{ channel: CHANNEL, type: 'shutdown' }]);
    forked[1]!.exit(0);
    await expect(supervisor.done).resolves.toBe(0);
  });

  it('holds a shutdown for a worker still loading until it has joined, then sends it', async () => {
    const supervisor = supervise();
    supervisor.stop();
    // Sent now, it would reach a worker before it listens for the primary's messages, and be lost.
    expect(forked.map((w) => w.sent)).toEqual([[], []]);
    forked[0]!.join();
    expect(forked[0]!.sent).toEqual([{ channel: CHANNEL, type: 'shutdown' }]);
    forked[1]!.listen();
    expect(forked[1]!.sent).toEqual([{ channel: CHANNEL, type: 'shutdown' }]);
    for (const worker of forked) worker.exit(0);
    await expect(supervisor.done).resolves.toBe(0);
    expect(forked).toHaveLength(2);
  });

  it('kills workers still running after the shutdown timeout plus the grace, and resolves 1', async () => {
    const supervisor = supervise();
    for (const worker of forked) worker.listen();
    supervisor.stop();
    forked[0]!.exit(0);
    vi.advanceTimersByTime(10_499);
    expect(forked[1]!.killed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(forked[1]!.killed).toBe(true);
    await expect(supervisor.done).resolves.toBe(1);
  });

  it('resolves 1 when a worker stops uncleanly (exit code 1)', async () => {
    const supervisor = supervise();
    supervisor.stop();
    forked[0]!.exit(0);
    forked[1]!.exit(1);
    await expect(supervisor.done).resolves.toBe(1);
  });

  it('hands other messages of a worker to onMessage with its slot, and sends to a slot', () => {
    const onMessage = vi.fn();
    const supervisor = supervise({ onMessage });
    const message = { channel: CHANNEL, type: 'endpoints-in-use' as const, endpoints: [] };
    forked[1]!.message(message);
    forked[1]!.message({ channel: 'rate_limiter_flexible', type: 'init' });
    expect(onMessage).toHaveBeenCalledExactlyOnceWith(2, message);
    supervisor.send(1, { ...message, from: 2 });
    supervisor.send(1, { ...message, from: 3 });
    // Held until the worker hears the primary, then sent in order.
    expect(forked[0]!.sent).toEqual([]);
    forked[0]!.join();
    expect(forked[0]!.sent).toEqual([
      { ...message, from: 2 },
      { ...message, from: 3 },
    ]);
    supervisor.send(1, { ...message, from: 2 });
    expect(forked[0]!.sent).toHaveLength(3);
  });

  it("keeps what a slot's worker did not hear for the worker that restarts in it", () => {
    const supervisor = supervise();
    const message = { channel: CHANNEL, type: 'endpoints-in-use' as const, endpoints: [], from: 2 };
    supervisor.send(1, message);
    inSlot(1)[0]!.exit(1);
    vi.advanceTimersByTime(100);
    inSlot(1)[1]!.join();
    expect(inSlot(1)[0]!.sent).toEqual([]);
    expect(inSlot(1)[1]!.sent).toEqual([message]);
  });
});
