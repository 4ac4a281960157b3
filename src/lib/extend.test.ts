import { describe, expect, it } from 'vitest';
import { extend } from './extend.js';

describe('extend', () => {
  it('gives what a spread of both objects gives, the later object winning', () => {
    const base = { a: 1, b: 2 };
    const result = extend(base, { b: 3, c: 4 });
    expect(result).toEqual({ ...base, ...{ b: 3, c: 4 } });
    expect(Object.keys(result)).toEqual(['a', 'b', 'c']);
  });

  it('returns a new object and leaves both inputs as they were', () => {
    const base = { a: 1 };
    const extra = { b: 2 };
    const result = extend(base, extra);
    expect(result).not.toBe(base);
    expect(result).not.toBe(extra);
    expect(base).toEqual({ a: 1 });
    expect(extra).toEqual({ b: 2 });
  });

  it('copies only own enumerable properties, as a spread does', () => {
    const base = Object.create({ inherited: true }) as Record<string, unknown>;
    base.own = 1;
    Object.defineProperty(base, 'hidden', { value: 2, enumerable: false });
    expect(extend(base, {})).toEqual({ own: 1 });
  });
});
