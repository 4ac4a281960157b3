/** A small seeded generator (mulberry32), so a failing fuzz run can be repeated with its seed. */
export interface Random {
  /** [0, 1) */
  next(): number;
  int(below: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  string(length: number, alphabet?: string): string;
}

const DEFAULT_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~ ';

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number) => Math.floor(next() * below);
  return {
    next,
    int,
    chance: (probability) => next() < probability,
    pick: (items) => items[int(items.length)]!,
    string: (length, alphabet = DEFAULT_ALPHABET) => {
      let out = '';
      for (let i = 0; i < length; i++) out += alphabet[int(alphabet.length)];
      return out;
    },
  };
}
