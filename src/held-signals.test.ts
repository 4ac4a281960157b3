import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { holdSignals } from './held-signals.js';
import { createLogger } from './observability/logger.js';
import { exitOnSignals } from './server.js';

describe('signals held from the start of start-up', () => {
  const logger = createLogger({ level: 'silent' });
  afterEach(() => vi.useRealTimers());

  function held(limitMs = 1_000) {
    const source = new EventEmitter();
    const exits: number[] = [];
    const signals = holdSignals({ logger, exit: (code) => exits.push(code), limitMs, source });
    return { source, exits, signals };
  }

  it('hands a signal that came before any listener to the first listener of its kind, once', () => {
    const { source, exits, signals } = held();
    source.emit('SIGINT', 'SIGINT');
    const terms: string[] = [];
    const ints: string[] = [];
    signals.on('SIGTERM', (signal) => terms.push(signal));
    signals.on('SIGINT', (signal) => ints.push(signal));
    expect(terms).toEqual([]);
    expect(ints).toEqual(['SIGINT']);
    source.emit('SIGTERM', 'SIGTERM');
    source.emit('SIGINT', 'SIGINT');
    expect(terms).toEqual(['SIGTERM']);
    expect(ints).toEqual(['SIGINT', 'SIGINT']);
    expect(exits).toEqual([]);
  });

  it('exits with 1 at once on a second signal before start-up has finished', () => {
    const { source, exits } = held();
    source.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([]);
    source.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([1]);
  });

  it('exits with 1 when start-up has not finished within the limit after a signal, and not once it has', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const slow = held(1_000);
    slow.source.emit('SIGTERM', 'SIGTERM');
    await vi.advanceTimersByTimeAsync(999);
    expect(slow.exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(slow.exits).toEqual([1]);

    const started = held(1_000);
    started.source.emit('SIGTERM', 'SIGTERM');
    started.signals.on('SIGTERM', () => {});
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(started.exits).toEqual([]);
  });

  it('stops the started gateway gracefully for a signal that came during start-up', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { source, exits, signals } = held();
    source.emit('SIGTERM', 'SIGTERM');
    const close = vi.fn(async () => ({ clean: true }));
    exitOnSignals({ close, shutdownTimeoutMs: 100 }, logger, (code) => exits.push(code), signals);
    await vi.advanceTimersByTimeAsync(10);
    expect(close).toHaveBeenCalledTimes(1);
    expect(exits).toEqual([0]);
  });
});
