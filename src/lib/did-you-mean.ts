/**
 * Suggestions for a mistyped name (a field, a wholesaler id): the closest known name within two edits
 * (insert, delete, replace, or swap two neighbours), else the only known name that starts with, or is
 * the start of, what was typed (or the shortest such, when it starts all the others). Undefined when nothing is close or the choice would be a guess.
 */
export function closestName(typed: string, known: readonly string[]): string | undefined {
  const lower = typed.toLowerCase();
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of known) {
    if (name === typed) continue;
    const distance = editDistance(lower, name.toLowerCase(), bestDistance);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  if (best !== undefined) return best;
  if (lower.length < 2) return undefined;
  const prefixed = known.filter((name) => {
    const other = name.toLowerCase();
    return other.startsWith(lower) || lower.startsWith(other);
  });
  // `custom-haus` → `custom-hausapotheke-ab12cd`, not its `…_test` twin: the shortest, if it starts all.
  const shortest = prefixed.reduce<string | undefined>(
    (best, name) => (best === undefined || name.length < best.length ? name : best),
    undefined,
  );
  if (shortest === undefined) return undefined;
  return prefixed.every((name) => name.toLowerCase().startsWith(shortest.toLowerCase()))
    ? shortest
    : undefined;
}

/**
 * Optimal string alignment distance (Levenshtein plus swaps of neighbours), giving up with `limit` as
 * soon as the answer cannot be below it: names here are short, but a typed value may not be.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMinimum = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, before[j - 2]! + 1);
      }
      current.push(value);
      rowMinimum = Math.min(rowMinimum, value);
    }
    if (rowMinimum >= limit) return limit;
    before = previous;
    previous = current;
  }
  return Math.min(previous[b.length]!, limit);
}
