import { describe, expect, it } from 'vitest';
import { createBatcher } from './batch.js';

describe('createBatcher', () => {
  it('writes what arrives in one turn together, and what arrives during a write in the next write', async () => {
    const writes: number[][] = [];
    let duringFirstWrite: Promise<number>[] = [];
    const batcher = createBatcher(async (items: number[]) => {
      writes.push(items);
      if (writes.length === 1) duringFirstWrite = [3, 4].map((n) => batcher.submit(n));
      await new Promise(setImmediate); // the write goes on past this turn
      return items.map((n) => n * 10);
    }, 100);
    const first = await Promise.all([1, 2].map((n) => batcher.submit(n)));
    expect(first).toEqual([10, 20]);
    expect(await Promise.all(duringFirstWrite)).toEqual([30, 40]);
    expect(writes).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('caps a batch and rejects every item of a failed write, then carries on', async () => {
    let calls = 0;
    const batcher = createBatcher(async (items: string[]) => {
      calls++;
      if (items.includes('bad')) throw new Error('write failed');
      return items;
    }, 2);
    const outcomes = await Promise.allSettled(['a', 'bad', 'c', 'd', 'e'].map((x) => batcher.submit(x)));
    expect(outcomes.map((o) => o.status)).toEqual([
      'rejected',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(calls).toBe(3);
  });
});
