import { describe, expect, it } from 'vitest';
import { WORKER_SLOT_ENV, workerCount, workerSlot } from './role.js';

describe('workerCount', () => {
  it('takes a number as it is, and auto or 0 as one worker per core', () => {
    expect(workerCount(1, 8)).toBe(1);
    expect(workerCount(3, 8)).toBe(3);
    expect(workerCount('auto', 8)).toBe(8);
    expect(workerCount(0, 2)).toBe(2);
    expect(workerCount('auto', 0)).toBe(1);
  });
});

describe('workerSlot', () => {
  it('is the slot the primary set, only in a cluster worker', () => {
    expect(workerSlot({ [WORKER_SLOT_ENV]: '2' }, true)).toBe(2);
    expect(workerSlot({ [WORKER_SLOT_ENV]: '2' }, false)).toBeUndefined();
    // A worker of someone else's cluster (pm2) is a gateway of its own.
    expect(workerSlot({}, true)).toBeUndefined();
    expect(workerSlot({ [WORKER_SLOT_ENV]: 'x' }, true)).toBeUndefined();
  });
});
