/**
 * The check every availability benchmark makes of the gateway's first answer before it measures: all
 * 50 articles came back, each asked of the wholesaler. An item with `invalid_pzn` was never asked (the
 * gateway refuses a PZN whose check digit is wrong before any call), so a scenario with such items
 * would measure less work than it claims.
 */
export function expectEveryArticleAsked(answer: unknown, what: string, count = 50): void {
  const items = (answer as { items?: { pzn?: string; invalid_pzn?: unknown }[] } | null)?.items;
  if (!Array.isArray(items) || items.length !== count)
    throw new Error(`${what} answered ${JSON.stringify(answer).slice(0, 300)}, not ${count} items`);
  const refused = items.filter((item) => item.invalid_pzn !== null);
  if (refused.length > 0)
    throw new Error(
      `${what}: ${refused.length} of ${count} items were not asked (invalid PZN, e.g. ${refused[0]!.pzn}); the scenario must use valid PZNs`,
    );
}
