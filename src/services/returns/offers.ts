import { ApiError } from '../../core/errors.js';
import { maxQuantity, normalisePzn } from '../../msv3/model.js';
import { ruecknahmeangebotAnfordern } from '../../msv3/operations/ruecknahmeangebot-anfordern.js';
import type { UpstreamDeps } from '../../wholesalers/call.js';
import type { CustomerRequest } from '../deliveries/notices.js';
import type { OrderKeyScope } from '../orders/ids.js';
import { requestIdFor } from './ids.js';
import { callBindingReturnOperation } from './outcome.js';

/**
 * `POST /v1/returns/offers` → `ruecknahmeangebotAnfordern` (v1 and v2, docs/msv3.md "Take-back offers"): the
 * pharmacy lists articles it would like to give back; the wholesaler confirms receipt with a reference
 * id to quote later. MSV3 carries no price, credit or per-article verdict, so neither does the answer.
 * Only for customers whose contract includes take-back offers (`return_offers`); otherwise the
 * wholesaler's AuthorizationFault becomes 403 `wholesaler_function_not_agreed`. The wholesaler records
 * each offer by its id, so a lost answer is 504 `return_outcome_unknown` (`returns/outcome.ts`).
 */

export interface OfferItemInput {
  pzn: string;
  quantity: number;
}

export interface TakeBackOfferJson {
  wholesaler: string;
  /** The MSV3 `ruecknahmeangebot/@Id` of this request. */
  offer_id: string;
  /** `ReferenzId`: the wholesaler's receipt, to quote by phone, mail or fax. */
  reference_id: string;
  /** The articles as sent (PZNs padded to 8 digits). */
  items: { pzn: string; quantity: number }[];
}

export async function requestTakeBackOffer(
  upstream: UpstreamDeps,
  request: CustomerRequest,
  items: readonly OfferItemInput[],
  keyScope?: OrderKeyScope,
): Promise<TakeBackOfferJson> {
  const wholesaler = await upstream.registry.resolve(request.tenant, request.wholesaler);
  const articles = checkedArticles(items, maxQuantity(wholesaler.version), request.wholesaler);
  const { id } = requestIdFor('ruecknahmeangebotAnfordern', keyScope);
  const value = await callBindingReturnOperation(
    upstream,
    wholesaler,
    ruecknahmeangebotAnfordern,
    request.credentials,
    { clientSoftwareId: upstream.clientSoftwareId, id, articles },
    {
      label: 'Take-back offer',
      id,
      withKey: keyScope !== undefined,
      withoutKey:
        'Do not send it again without an Idempotency-Key (that would be a second offer): ask the wholesaler about this offer id',
    },
  );
  return { wholesaler: request.wholesaler, offer_id: id, reference_id: value.referenceId, items: articles };
}

/** MSV3 forbids a PZN twice in one request (`04114918` and `4114918` are the same PZN). */
function checkedArticles(items: readonly OfferItemInput[], max: number, wholesaler: string) {
  const firstIndex = new Map<string, number>();
  return items.map((item, index) => {
    const pzn = normalisePzn(item.pzn);
    const earlier = firstIndex.get(pzn);
    if (earlier !== undefined) {
      throw new ApiError(
        'invalid_request',
        `items[${index}].pzn ${pzn} repeats items[${earlier}].pzn: list each PZN once, with the total quantity.`,
        { wholesaler, param: `items[${index}].pzn` },
      );
    }
    firstIndex.set(pzn, index);
    if (item.quantity > max) {
      throw new ApiError(
        'invalid_request',
        `items[${index}].quantity must be at most ${max} for this wholesaler's MSV3 version.`,
        { wholesaler, param: `items[${index}].quantity` },
      );
    }
    return { pzn, quantity: item.quantity };
  });
}
