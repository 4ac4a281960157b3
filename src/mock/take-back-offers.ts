import type {
  TakeBackOfferRequest,
  TakeBackOfferResponse,
} from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import { rejectDuplicates } from './business-rules.js';
import type { RequestContext } from './context.js';
import { authorizationFault } from './faults.js';

/**
 * ruecknahmeangebotAnfordern (docs/msv3.md "Take-back offers"): only for customers with
 * `RuecknahmeangebotVereinbart` (else AuthorizationFaultInfo). The answer is just a reference to quote later;
 * a repeated request with the same `@Id` gets the same reference.
 */
export function requestTakeBackOffer(
  ctx: RequestContext,
  request: TakeBackOfferRequest,
): TakeBackOfferResponse {
  const { customer, tenant, now, env } = ctx;
  if (!customer.contract.takeBackOffers) {
    throw authorizationFault('ruecknahmeangebotAnfordern', 'RuecknahmeangebotVereinbart');
  }
  const known = customer.takeBackOffers.get(request.id);
  if (known !== undefined) return known.response;
  rejectDuplicates(
    request.articles.map((a) => a.pzn),
    'PZN',
  );
  tenant.counters.takeBack++;
  const year = env.calendar.at(now).date.slice(0, 4);
  const response = {
    id: request.id,
    referenceId: `RNA-${year}-${String(tenant.counters.takeBack).padStart(6, '0')}`,
  };
  customer.takeBackOffers.set(request.id, {
    response,
    articles: request.articles.map((a) => ({ pzn: a.pzn, quantity: a.quantity })),
    requestedAt: now,
  });
  return response;
}
