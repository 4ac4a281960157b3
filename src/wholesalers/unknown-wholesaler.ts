import { closestName } from '../lib/did-you-mean.js';

/** Ids listed in the message at most; an account with more custom wholesalers is told how many more. */
const LISTED_IDS = 15;
/** A typed id is shown at most this long. */
const SHOWN_ID_LENGTH = 40;

/**
 * "Unknown wholesaler `phonix`. Did you mean `phoenix`? Known ids: phoenix, alliance, …" — the ids this
 * key can use (`GET /v1/wholesalers`: the catalogue for its mode, `<id>_test` for test keys, the
 * account's custom wholesalers), the closest one suggested (docs/errors.md). Bounded in length.
 */
export function unknownWholesalerMessage(id: string, known: readonly string[]): string {
  const suggestion = closestName(id, known);
  const listed = known.slice(0, LISTED_IDS).join(', ');
  const more = known.length > LISTED_IDS ? ` and ${known.length - LISTED_IDS} more` : '';
  return [
    `Unknown wholesaler ${shownId(id)}.`,
    suggestion === undefined ? '' : ` Did you mean \`${suggestion}\`?`,
    known.length === 0 ? ' This key can use no wholesaler.' : ` Known ids: ${listed}${more}.`,
  ].join('');
}

/** The id as typed, in backticks, shortened, with no backticks or control characters of its own. */
export function shownId(id: string): string {
  const clean = id.replace(/[`\u0000-\u001f\u007f-\u009f]/g, '?');
  return `\`${clean.length > SHOWN_ID_LENGTH ? `${clean.slice(0, SHOWN_ID_LENGTH)}…` : clean}\``;
}
