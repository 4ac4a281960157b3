import type { Tenant } from '../../core/caller.js';
import { newUuid } from '../../lib/ids.js';
import type { Credentials } from '../../msv3/credentials.js';
import { normalisePzn } from '../../msv3/model.js';
import { verfuegbarkeitAnfragenBulk } from '../../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { callWholesaler, type UpstreamDeps } from '../../wholesalers/call.js';

/**
 * POST /v1/availability/bulk → `verfuegbarkeitAnfragenBulk` (docs/msv3.md "Bulk availability"), the
 * explicit-list form (1..10,000 PZNs). MSV3 returns only the available PZNs; `available_pzns` lists them in
 * request order and the additive `unavailable_pzns` the rest. The question is a set, so repeated PZNs are
 * asked once (`1` and `00000001` are the same PZN). Whether the customer may use the function is a contract
 * item: without it the wholesaler answers AuthorizationFault → 403 `wholesaler_function_not_agreed`.
 */

export interface BulkAvailabilityInput {
  wholesaler: string;
  pzns: string[];
}

export interface BulkAvailabilityResult {
  wholesaler: string;
  available_pzns: string[];
  unavailable_pzns: string[];
}

export async function checkBulkAvailability(
  deps: UpstreamDeps,
  tenant: Tenant,
  credentials: Credentials,
  input: BulkAvailabilityInput,
): Promise<BulkAvailabilityResult> {
  const pzns = [...new Set(input.pzns.map(normalisePzn))];
  const wholesaler = await deps.registry.resolve(tenant, input.wholesaler);
  const { value } = await callWholesaler(deps, wholesaler, verfuegbarkeitAnfragenBulk, credentials, {
    clientSoftwareId: deps.clientSoftwareId,
    id: newUuid(),
    query: { kind: 'list', pzns },
  });
  const inStock = new Set(value.availablePzns);
  return {
    wholesaler: input.wholesaler,
    available_pzns: pzns.filter((pzn) => inStock.has(pzn)),
    unavailable_pzns: pzns.filter((pzn) => !inStock.has(pzn)),
  };
}
