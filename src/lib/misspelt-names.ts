import { editDistance } from './did-you-mean.js';

/** A name that is not known but looks like a slip of the keyboard for one that is. */
export interface MisspeltName {
  typed: string;
  meant: string;
}

/** Unit endings of setting names: a name typed without its unit (`WEBHOOK_TIMEOUT`) means the setting. */
const UNIT_ENDINGS = ['_MS', '_SECONDS', '_BYTES', '_DAYS', '_POINTS'];

/**
 * The names among `given` that are not `known` but look misspelt: within one edit of a short known name
 * (five characters or fewer) or two of a longer one (letter case aside, a swap of neighbours counting as
 * one), and starting alike (three characters in common, or first words, up to `_`, within one edit of
 * each other); or a known name without its unit ending. Anything else in an environment (`PATH`,
 * `HOME`, `HOSTNAME`, `NODE_ENV`, a platform's `REDIS_PORT`) is left alone, and so is a name two known
 * names are equally close to: a suggestion must not be a guess.
 */
export function misspeltNames(given: Iterable<string>, known: readonly string[]): MisspeltName[] {
  const knownSet = new Set(known);
  const found: MisspeltName[] = [];
  for (const typed of given) {
    if (knownSet.has(typed)) continue;
    const meant = closestKnown(typed, known) ?? withoutUnit(typed, known);
    if (meant !== undefined) found.push({ typed, meant });
  }
  return found;
}

function closestKnown(typed: string, known: readonly string[]): string | undefined {
  const upper = typed.toUpperCase();
  let best: string[] = [];
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const limit = name.length <= 5 ? 2 : 3;
    const distance = editDistance(upper, name.toUpperCase(), limit);
    if (distance >= limit || !startsAlike(upper, name.toUpperCase())) continue;
    if (distance < bestDistance) {
      best = [name];
      bestDistance = distance;
    } else if (distance === bestDistance) {
      best.push(name);
    }
  }
  return best.length === 1 ? best[0] : undefined;
}

function startsAlike(a: string, b: string): boolean {
  if (a.slice(0, 3) === b.slice(0, 3)) return true;
  const firstWord = (name: string) => name.split('_')[0]!;
  return editDistance(firstWord(a), firstWord(b), 2) <= 1;
}

function withoutUnit(typed: string, known: readonly string[]): string | undefined {
  const upper = typed.toUpperCase();
  const matches = known.filter((name) =>
    UNIT_ENDINGS.some((ending) => name.toUpperCase() === `${upper}${ending}`),
  );
  return matches.length === 1 ? matches[0] : undefined;
}
