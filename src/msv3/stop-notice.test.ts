import { describe, expect, it, vi } from 'vitest';
import { stopNotice } from './stop-notice.js';

describe('stop notice', () => {
  it('tells each listener once when the shutdown begins, and not those that stopped listening', () => {
    const shutdown = new AbortController();
    const notice = stopNotice(shutdown.signal);
    const [first, second, gone] = [vi.fn(), vi.fn(), vi.fn()];
    notice.listen(first);
    notice.listen(second);
    const goneListening = notice.listen(gone);
    notice.unlisten(goneListening);
    notice.unlisten(goneListening);
    expect(notice.stopped).toBe(false);
    shutdown.abort();
    shutdown.abort();
    expect(notice.stopped).toBe(true);
    expect([first.mock.calls.length, second.mock.calls.length, gone.mock.calls.length]).toEqual([1, 1, 0]);
  });

  it('lets a listener forget another that has not run yet, or one that has', () => {
    const shutdown = new AbortController();
    const notice = stopNotice(shutdown.signal);
    const order: string[] = [];
    const first = notice.listen(() => order.push('first'));
    notice.listen(() => {
      order.push('second');
      notice.unlisten(first);
      notice.unlisten(third);
    });
    const third = notice.listen(() => order.push('third'));
    notice.listen(() => order.push('fourth'));
    shutdown.abort();
    expect(order).toEqual(['first', 'second', 'fourth']);
  });

  it('runs listeners in the order they came, whatever was forgotten between them', () => {
    const shutdown = new AbortController();
    const notice = stopNotice(shutdown.signal);
    const order: number[] = [];
    const listening = Array.from({ length: 10 }, (_, i) => notice.listen(() => order.push(i)));
    for (const i of [0, 4, 9]) notice.unlisten(listening[i]!);
    shutdown.abort();
    expect(order).toEqual([1, 2, 3, 5, 6, 7, 8]);
  });

  it('never runs a listener that comes after the shutdown began', () => {
    const notice = stopNotice(AbortSignal.abort());
    const late = vi.fn();
    notice.unlisten(notice.listen(late));
    notice.listen(late);
    expect(notice.stopped).toBe(true);
    expect(late).not.toHaveBeenCalled();
  });

  it('puts one listener on the shutdown signal however many calls listen', () => {
    const shutdown = new AbortController();
    const added = vi.spyOn(shutdown.signal, 'addEventListener');
    const notice = stopNotice(shutdown.signal);
    const listeners = Array.from({ length: 50 }, () => vi.fn());
    for (const listener of listeners) notice.listen(listener);
    expect(added).toHaveBeenCalledTimes(1);
    shutdown.abort();
    expect(listeners.every((listener) => listener.mock.calls.length === 1)).toBe(true);
  });
});
