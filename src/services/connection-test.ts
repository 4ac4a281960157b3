import type { Kysely } from 'kysely';
import type { Tenant } from '../core/caller.js';
import { isApiError } from '../core/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Credentials } from '../msv3/credentials.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { markCustomWholesalerVerified } from '../store/custom-wholesalers.js';
import type { Tables } from '../store/schema.js';
import { callWholesaler, type UpstreamDeps } from '../wholesalers/call.js';
import { capabilitiesOfVersion, type ResolvedWholesaler } from '../wholesalers/registry.js';
import type { Route } from '../wholesalers/target.js';
import { capabilitiesFromContract, fetchContractData } from './contracts.js';

/**
 * POST /v1/connection/test → `verbindungTesten` (docs/msv3.md "Connection test"). Success is an empty answer;
 * wrong credentials are the wholesaler's HTTP 401/403 → 401 `wholesaler_credentials_rejected`.
 *
 * Verification of custom wholesalers (docs/wholesalers.md "Custom wholesalers"): a custom wholesaler is
 * registered with `verified: false, capabilities: []`. The first successful connection test that reaches
 * its **registered endpoint** (a live key, or a test key with `<id>_test`; a test key with the plain id
 * reaches the sandbox and proves nothing about the endpoint) sets `verified: true` and fills
 * `capabilities` from its contract data (`vertragsdatenAbfragen`, same credentials): the functions of
 * its MSV3 version, without `bulk_availability` / `return_offers` unless the contract agrees them. If
 * the contract data cannot be read, the connection still counts and those two contract-gated functions
 * are left out. Later tests do not change a verified wholesaler.
 */

export interface ConnectionTestDeps {
  upstream: UpstreamDeps;
  db: Kysely<Tables>;
  clock: Clock;
}

export interface ConnectionTestResult {
  connected: true;
  wholesaler: string;
  latency_ms: number;
  /** Additive: where the call went (docs/wholesalers.md "Routing"). */
  route: Route;
}

export async function testConnection(
  deps: ConnectionTestDeps,
  tenant: Tenant,
  credentials: Credentials,
  wholesalerId: string,
): Promise<ConnectionTestResult> {
  const wholesaler = await deps.upstream.registry.resolve(tenant, wholesalerId);
  const { latencyMs } = await callWholesaler(deps.upstream, wholesaler, verbindungTesten, credentials, {
    clientSoftwareId: deps.upstream.clientSoftwareId,
  });
  if (reachesUnverifiedEndpoint(wholesaler)) await verify(deps, tenant, wholesaler, credentials);
  return {
    connected: true,
    wholesaler: wholesalerId,
    latency_ms: Math.max(0, Math.round(latencyMs)),
    route: wholesaler.route,
  };
}

function reachesUnverifiedEndpoint(wholesaler: ResolvedWholesaler): boolean {
  return wholesaler.custom !== null && !wholesaler.custom.verified && wholesaler.route !== 'sandbox';
}

const CONTRACT_GATED = new Set(['bulk_availability', 'return_offers']);

async function verify(
  deps: ConnectionTestDeps,
  tenant: Tenant,
  wholesaler: ResolvedWholesaler,
  credentials: Credentials,
): Promise<void> {
  let capabilities: string[];
  try {
    const contract = await fetchContractData(deps.upstream, wholesaler, credentials);
    capabilities = capabilitiesFromContract(wholesaler.version, contract);
  } catch (error) {
    if (!isApiError(error)) throw error;
    capabilities = capabilitiesOfVersion(wholesaler.version).filter((c) => !CONTRACT_GATED.has(c));
  }
  // The stored id has no `_test` suffix; `custom` is the stored registration.
  await markCustomWholesalerVerified(deps.db, deps.clock, tenant, wholesaler.custom!.id, capabilities);
}
