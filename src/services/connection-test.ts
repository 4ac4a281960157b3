import type { Kysely } from 'kysely';
import type { Tenant } from '../core/caller.js';
import { type ErrorKind, isApiError } from '../core/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Credentials } from '../msv3/credentials.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { markCustomWholesalerVerified } from '../store/custom-wholesalers.js';
import type { Tables } from '../store/schema.js';
import type { ToleratedDeviation } from '../wholesalers/answer-deviations.js';
import { callWholesaler, type UpstreamDeps } from '../wholesalers/call.js';
import type { ResolvedWholesaler } from '../wholesalers/registry.js';
import type { Route } from '../wholesalers/target.js';
import { capabilitiesFromContract, fetchContractData } from './contracts.js';

/**
 * POST /v1/connection/test → `verbindungTesten` (docs/msv3.md "Connection test"). Success is an empty answer;
 * wrong credentials are the wholesaler's HTTP 401/403 → 401 `wholesaler_credentials_rejected`.
 *
 * Verification of custom wholesalers (docs/wholesalers.md "Custom wholesalers"): a custom wholesaler is
 * registered with `verified: false, capabilities: []`. Verified means that a connection test reached its
 * **registered endpoint** (a live key, or a test key with `<id>_test`; a test key with the plain id
 * reaches the sandbox and proves nothing about the endpoint) with credentials it accepted, **and** read
 * its contract data (`vertragsdatenAbfragen`, same credentials), from which `capabilities` are set: the
 * functions of its MSV3 version, without `bulk_availability` / `return_offers` unless the contract agrees
 * them. When the contract data cannot be read or decoded, the connection test still answers (the
 * credentials work) but says so in `warnings`, with the error kind, and leaves the wholesaler unverified:
 * capabilities are never derived from nothing, and the next connection test tries again. Later tests do
 * not change a verified wholesaler.
 *
 * `tolerated_deviations` lists the schema deviations this process has tolerated in the endpoint's answers
 * (MSV3_TOLERATE_DEVIATIONS, docs/msv3.md "Tolerated deviations"), so that they can be reported to the
 * wholesaler.
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
  /** Additive: what the test could not check, e.g. a custom wholesaler's unreadable contract data. */
  warnings: ConnectionWarning[];
  /** Additive: schema deviations tolerated in this endpoint's answers since the gateway started. */
  tolerated_deviations: ToleratedDeviation[];
}

interface ConnectionWarning {
  /** The error kind the failed step answered with (docs/error-catalogue.md). */
  error: ErrorKind;
  message: string;
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
  const warnings: ConnectionWarning[] = [];
  if (reachesUnverifiedEndpoint(wholesaler)) {
    const unreadable = await verify(deps, tenant, wholesaler, credentials);
    if (unreadable !== undefined) warnings.push(unreadable);
  }
  return {
    connected: true,
    wholesaler: wholesalerId,
    latency_ms: Math.max(0, Math.round(latencyMs)),
    route: wholesaler.route,
    warnings,
    tolerated_deviations: deps.upstream.deviations?.seen(wholesaler.endpoint.target) ?? [],
  };
}

function reachesUnverifiedEndpoint(wholesaler: ResolvedWholesaler): boolean {
  return wholesaler.custom !== null && !wholesaler.custom.verified && wholesaler.route !== 'sandbox';
}

/** Marks the wholesaler verified with the capabilities of its contract; else the warning why not. */
async function verify(
  deps: ConnectionTestDeps,
  tenant: Tenant,
  wholesaler: ResolvedWholesaler,
  credentials: Credentials,
): Promise<ConnectionWarning | undefined> {
  let capabilities: string[];
  try {
    const contract = await fetchContractData(deps.upstream, wholesaler, credentials);
    capabilities = capabilitiesFromContract(wholesaler.version, contract);
  } catch (error) {
    if (!isApiError(error)) throw error;
    return {
      error: error.kind,
      message:
        `The contract data of ${wholesaler.id} (vertragsdatenAbfragen) could not be read, so it stays unverified and without capabilities; the next connection test tries again. ` +
        error.message,
    };
  }
  // The stored id has no `_test` suffix; `custom` is the stored registration.
  await markCustomWholesalerVerified(deps.db, deps.clock, tenant, wholesaler.custom!.id, capabilities);
  return undefined;
}
