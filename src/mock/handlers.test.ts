import { describe, expect, it } from 'vitest';
import { operations } from '../msv3/operations/index.js';
import { HANDLERS } from './handlers.js';

describe('the handler table', () => {
  it('answers every operation of the codec registry, with the same codec', () => {
    for (const operation of operations)
      expect(HANDLERS.get(operation.name)?.operation, operation.name).toBe(operation);
  });

  it('has no handler for an operation the registry does not know', () => {
    const known = new Set(operations.map((o) => o.name));
    expect([...HANDLERS.keys()].filter((name) => !known.has(name))).toEqual([]);
  });

  it('covers the 13 operations of MSV3 v2 (7 of them in v1)', () => {
    expect(HANDLERS.size).toBe(13);
    expect([...HANDLERS.values()].filter((h) => h.operation.versions.includes(1))).toHaveLength(7);
  });
});
