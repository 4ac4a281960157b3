import type { Tenant } from '../../core/caller.js';
import { ApiError } from '../../core/errors.js';
import { newUuid } from '../../lib/ids.js';
import type { Credentials } from '../../msv3/credentials.js';
import { maxQuantity, normalisePzn } from '../../msv3/model.js';
import {
  type AvailabilityArticle,
  type Bedarf,
  verfuegbarkeitAnfragen,
} from '../../msv3/operations/verfuegbarkeit-anfragen.js';
import { callWholesaler, type UpstreamDeps } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import {
  type DeliveryPortion,
  type SubstitutionInfo,
  toDeliveryPortion,
  toSubstitution,
} from '../delivery-parts.js';
import { type InvalidPzn, invalidPzn } from '../pzn-check.js';

/**
 * POST /v1/availability → `verfuegbarkeitAnfragen` (docs/msv3.md "Availability").
 *
 * - PZNs are left-padded to 8 digits on the way in and out; a PZN may occur once per request (MSV3
 *   forbids duplicates, and merging would blur different demand types), a repeat is a 400 naming it.
 * - Quantities: 1..99,999 in the schema; 1..9,999 for v1 wholesalers, checked once the wholesaler is known.
 * - `demand_type` → v2 `@Bedarf` per article (`direct` → direkt, `one_of_many` → einsAusN, `unspecified`
 *   → unspezifisch). v1 has only the request-level `@EinsAusNBedarf`: true iff every item is
 *   `one_of_many`; for a mixed list it is false (v1 cannot express it per article).
 * - `response_type` from `@RTyp`: Spezifisch → `standard` (docs/msv3.md "Availability answers": normal and network
 *   parts carry a delivery time or tour), Unspezifisch → `unspecific` (the contract lacks specific
 *   answers; times, tours and quantities may be missing).
 * - `available` is not an MSV3 field: true iff every part is `normal` or `network` (deliverable with a
 *   regular tour, nothing back-ordered, procured or refused) and no binding substitution replaces the
 *   article (a `proposal` does not count).
 * - Items come back in request order, matched by PZN (MSV3 says nothing about the order).
 * - A PZN with a wrong check digit is not asked (`services/pzn-check.ts`): its item says why
 *   (`invalid_pzn`, with the check digit the number would need), the other items are asked as usual. When
 *   no item is left to ask, no wholesaler is called and `response_type` is null.
 */

type DemandType = 'direct' | 'one_of_many' | 'unspecified';

export interface AvailabilityInput {
  wholesaler: string;
  items: { pzn: string; quantity: number; demand_type?: DemandType }[];
}

export interface AvailabilityItem {
  pzn: string;
  quantity_requested: number;
  available: boolean;
  deliveries: DeliveryPortion[];
  substitution: SubstitutionInfo | null;
  invalid_pzn: InvalidPzn | null;
}

export interface AvailabilityResult {
  wholesaler: string;
  response_type: 'standard' | 'unspecific' | null;
  items: AvailabilityItem[];
}

/**
 * `demand_type` → `@Bedarf`. A switch rather than a lookup table: the value comes from JSON.parse as a
 * string V8 has not interned, and a keyed load with such a key looks it up in V8's string table first.
 */
function bedarf(demand: DemandType | undefined): Bedarf {
  switch (demand) {
    case 'one_of_many':
      return 'einsAusN';
    case 'unspecified':
      return 'unspezifisch';
    default:
      return 'direkt';
  }
}

const AVAILABLE_TYPES = new Set(['Normal', 'Verbund']);

export async function checkAvailability(
  deps: UpstreamDeps,
  tenant: Tenant,
  credentials: Credentials,
  input: AvailabilityInput,
): Promise<AvailabilityResult> {
  const pzns = uniquePzns(
    input.items.map((item) => item.pzn),
    'items',
    '.pzn',
    input.wholesaler,
  );
  const wholesaler = await deps.registry.resolve(tenant, input.wholesaler);
  return availabilityAt(deps, wholesaler, credentials, input, pzns);
}

/**
 * The availability question to one resolved wholesaler, its PZNs already padded and unique
 * (`uniquePzns`). `signal` ends the call when the caller stops waiting (compare.ts's deadline).
 */
export async function availabilityAt(
  deps: UpstreamDeps,
  wholesaler: ResolvedWholesaler,
  credentials: Credentials,
  input: AvailabilityInput,
  pzns: readonly string[],
  signal?: AbortSignal,
): Promise<AvailabilityResult> {
  checkQuantities(wholesaler, input.items);
  const problems = pzns.map(invalidPzn);
  const notAsked = (i: number): AvailabilityItem => ({
    pzn: pzns[i]!,
    quantity_requested: input.items[i]!.quantity,
    available: false,
    deliveries: [],
    substitution: null,
    invalid_pzn: problems[i]!,
  });
  // A loop, not flatMap: V8 flattens each one-element array through its runtime (about 1,300
  // instructions per item; docs/performance.md "Instructions per request").
  const articles: { pzn: string; quantity: number; demand: Bedarf }[] = [];
  input.items.forEach((item, i) => {
    if (problems[i] === null)
      articles.push({ pzn: pzns[i]!, quantity: item.quantity, demand: bedarf(item.demand_type) });
  });
  if (articles.length === 0) {
    return { wholesaler: input.wholesaler, response_type: null, items: pzns.map((_, i) => notAsked(i)) };
  }

  const { value } = await callWholesaler(
    deps,
    wholesaler,
    verfuegbarkeitAnfragen,
    credentials,
    {
      clientSoftwareId: deps.clientSoftwareId,
      id: newUuid(),
      articles,
    },
    signal,
  );

  const articleFor = answerLookup(value.articles, articles);
  let asked = 0;
  return {
    wholesaler: input.wholesaler,
    response_type: value.responseType === 'Spezifisch' ? 'standard' : 'unspecific',
    items: pzns.map((pzn, i) => {
      if (problems[i] !== null) return notAsked(i);
      const article = articleFor(pzn, asked++);
      if (article === undefined) {
        throw new ApiError(
          'wholesaler_bad_response',
          `The answer of ${input.wholesaler} has no entry for items[${i}].pzn ${pzn}.`,
          { wholesaler: input.wholesaler },
        );
      }
      return toItem(pzn, article);
    }),
  };
}

/**
 * Finds the answer's entry for an asked PZN (the last one, should a wholesaler list a PZN twice).
 * Wholesalers answer in the order asked, so when the answer has exactly the asked articles in that
 * order, each is found at its own position; otherwise through a map of the answer.
 */
function answerLookup(
  answered: readonly AvailabilityArticle[],
  asked: readonly { pzn: string }[],
): (pzn: string, position: number) => AvailabilityArticle | undefined {
  const inOrder =
    answered.length === asked.length &&
    answered.every((article, i) => article.requestedPzn === asked[i]!.pzn);
  if (inOrder) return (_pzn, position) => answered[position];
  const byPzn = new Map<string, AvailabilityArticle>();
  for (const article of answered) byPzn.set(article.requestedPzn, article);
  return (pzn) => byPzn.get(pzn);
}

function toItem(pzn: string, article: AvailabilityArticle): AvailabilityItem {
  const bindingSubstitution =
    article.substitution !== undefined && article.substitution.reason !== 'Vorschlag';
  return {
    pzn,
    quantity_requested: article.requestedQuantity,
    available: !bindingSubstitution && article.parts.every((part) => AVAILABLE_TYPES.has(part.type)),
    // map allocates the exact length; push would grow an empty array to 17 slots first.
    deliveries: article.parts.map((part) => toDeliveryPortion(part)),
    substitution: toSubstitution(article.substitution),
    invalid_pzn: null,
  };
}

/** Pads every PZN to 8 digits; a repeat (also `123` vs `00000123`) is a 400 naming both positions. */
export function uniquePzns(
  raw: readonly string[],
  list: string,
  field: string,
  wholesaler: string | null,
): string[] {
  const firstAt = new Map<string, number>();
  return raw.map((text, i) => {
    const pzn = normalisePzn(text);
    const earlier = firstAt.get(pzn);
    if (earlier !== undefined) {
      const param = `${list}[${i}]${field}`;
      throw new ApiError(
        'invalid_request',
        `${param} repeats ${list}[${earlier}]${field} (${pzn}); MSV3 allows each PZN once per request, so send one entry with the total quantity.`,
        { param, wholesaler },
      );
    }
    firstAt.set(pzn, i);
    return pzn;
  });
}

/** The schema allows up to the v2 maximum; v1 wholesalers take at most 9,999 units per line. */
function checkQuantities(
  wholesaler: ResolvedWholesaler,
  items: readonly { quantity: number }[],
  list = 'items',
): void {
  const max = maxQuantity(wholesaler.version);
  const index = items.findIndex((item) => item.quantity > max);
  if (index === -1) return;
  const param = `${list}[${index}].quantity`;
  throw new ApiError(
    'invalid_request',
    `${param} must be at most ${max}: ${wholesaler.id} speaks MSV3 version ${wholesaler.version}.`,
    { param, wholesaler: wholesaler.id },
  );
}
