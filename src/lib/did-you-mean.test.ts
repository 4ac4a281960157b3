import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closestName, editDistance } from './did-you-mean.js';

describe('suggesting the name meant', () => {
  it('suggests a name within two edits, swaps of neighbours counting as one', () => {
    expect(closestName('phonix', ['phoenix', 'alliance'])).toBe('phoenix');
    expect(closestName('quantitty', ['pzn', 'quantity'])).toBe('quantity');
    expect(closestName('qunatity', ['pzn', 'quantity'])).toBe('quantity');
    expect(closestName('PHOENIX', ['phoenix'])).toBe('phoenix');
  });

  it('suggests the one name that starts with what was typed, and nothing when several do or none is close', () => {
    expect(closestName('custom-haus', ['phoenix', 'custom-hausapotheke-ab12cd'])).toBe(
      'custom-hausapotheke-ab12cd',
    );
    expect(closestName('custom', ['custom-a-111111', 'custom-b-222222'])).toBeUndefined();
    expect(closestName('sanacorp', ['phoenix', 'alliance'])).toBeUndefined();
    expect(closestName('x'.repeat(10_000), ['phoenix'])).toBeUndefined();
  });

  it('measures the distance as the textbook optimal string alignment does', () => {
    const reference = (a: string, b: string): number => {
      const d = Array.from({ length: a.length + 1 }, (_, i) =>
        Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
      );
      for (let i = 1; i <= a.length; i++)
        for (let j = 1; j <= b.length; j++) {
          const row = d[i]!;
          row[j] = Math.min(
            d[i - 1]![j]! + 1,
            row[j - 1]! + 1,
            d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
          );
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
            row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
        }
      return d[a.length]![b.length]!;
    };
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 7 });
    fc.assert(
      fc.property(word, word, fc.integer({ min: 1, max: 5 }), (a, b, limit) => {
        expect(editDistance(a, b)).toBe(reference(a, b));
        expect(editDistance(a, b, limit)).toBe(Math.min(reference(a, b), limit));
      }),
      { numRuns: 1000 },
    );
  });
});
