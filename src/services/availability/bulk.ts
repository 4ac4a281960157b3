import type { Tenant } from '../../core/caller.js';
import { newUuid } from '../../lib/ids.js';
import type { Credentials } from '../../msv3/credentials.js';
import { normalisePzn } from '../../msv3/model.js';
import { verfuegbarkeitAnfragenBulk } from '../../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { callWholesaler, type UpstreamDeps } from '../../wholesalers/call.js';
import { type InvalidPzn, invalidPzn } from '../pzn-check.js';

/**
 * POST /v1/availability/bulk → `verfuegbarkeitAnfragenBulk` (docs/msv3.md "Bulk availability"), the
 * explicit-list form (1..10,000 PZNs). MSV3 returns only the available PZNs; `available_pzns` lists them in
 * request order and the additive `unavailable_pzns` the rest. The question is a set, so repeated PZNs are
 * asked once (`1` and `00000001` are the same PZN). Whether the customer may use the function is a contract
 * item: without it the wholesaler answers AuthorizationFault → 403 `wholesaler_function_not_agreed`.
 * A PZN with a wrong check digit is not asked: it is listed in `invalid_pzns` with the reason, and in
 * neither of the other lists (`services/pzn-check.ts`); with none left, no wholesaler is called.
 */

export interface BulkAvailabilityInput {
  wholesaler: string;
  pzns: string[];
}

export interface BulkAvailabilityResult {
  wholesaler: string;
  available_pzns: string[];
  unavailable_pzns: string[];
  invalid_pzns: ({ pzn: string } & InvalidPzn)[];
}

export async function checkBulkAvailability(
  deps: UpstreamDeps,
  tenant: Tenant,
  credentials: Credentials,
  input: BulkAvailabilityInput,
): Promise<BulkAvailabilityResult> {
  const requested = [...new Set(input.pzns.map(normalisePzn))];
  const wholesaler = await deps.registry.resolve(tenant, input.wholesaler);
  const invalid = requested.flatMap((pzn) => {
    const problem = invalidPzn(pzn);
    return problem === null ? [] : [{ pzn, ...problem }];
  });
  const pzns = invalid.length === 0 ? requested : requested.filter((pzn) => invalidPzn(pzn) === null);
  const inStock = new Set<string>();
  if (pzns.length > 0) {
    const { value } = await callWholesaler(deps, wholesaler, verfuegbarkeitAnfragenBulk, credentials, {
      clientSoftwareId: deps.clientSoftwareId,
      id: newUuid(),
      query: { kind: 'list', pzns },
    });
    for (const pzn of value.availablePzns) inStock.add(pzn);
  }
  return {
    wholesaler: input.wholesaler,
    available_pzns: pzns.filter((pzn) => inStock.has(pzn)),
    unavailable_pzns: pzns.filter((pzn) => !inStock.has(pzn)),
    invalid_pzns: invalid,
  };
}
