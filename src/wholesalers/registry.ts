import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tenant } from '../core/caller.js';
import { ApiError } from '../core/errors.js';
import { extend } from '../lib/extend.js';
import type { Msv3Endpoint } from '../msv3/client.js';
import type { Msv3Version } from '../msv3/envelope.js';
import {
  type CustomWholesaler,
  findCustomWholesaler,
  listCustomWholesalers,
} from '../store/custom-wholesalers.js';
import type { Tables } from '../store/schema.js';
import type { CatalogueEntry, CatalogueServer } from './catalogue.js';
import type { Route, TargetDirectory } from './target.js';
import { shownId, unknownWholesalerMessage } from './unknown-wholesaler.js';

/** A wholesaler as the API shows it (docs/wholesalers.md "Catalogue", plus additive fields). */
export interface Wholesaler {
  id: string;
  name: string;
  /** Only for custom wholesalers. */
  endpoint?: string;
  verified: boolean;
  capabilities: string[];
  msv3_version: Msv3Version;
  /** Where a request for this id goes with the caller's key (docs/wholesalers.md "Routing"). */
  route: Route;
}

export interface ResolvedWholesaler {
  /** The id as requested, `_test` suffix included. */
  id: string;
  name: string;
  version: Msv3Version;
  route: Route;
  endpoint: Msv3Endpoint;
  /** Set for customer-registered endpoints: they are called through the address-restricted transport. */
  custom: CustomWholesaler | null;
}

export interface WholesalerRegistry {
  list(tenant: Tenant): Promise<Wholesaler[]>;
  /** @throws ApiError `wholesaler_not_found` (404) with a message saying why. */
  resolve(tenant: Tenant, id: string): Promise<ResolvedWholesaler>;
}

export const TEST_SUFFIX = '_test';

const V2_CAPABILITIES = [
  'availability',
  'bulk_availability',
  'order',
  'order_status',
  'contracts',
  'deliveries',
  'returns',
  'return_offers',
  'documents',
];
const V1_CAPABILITIES = [
  'availability',
  'bulk_availability',
  'order',
  'order_status',
  'contracts',
  'return_offers',
];

/** What an MSV3 version can do at most; the customer's contract may switch functions off. */
export function capabilitiesOfVersion(version: Msv3Version): string[] {
  return version === 1 ? [...V1_CAPABILITIES] : [...V2_CAPABILITIES];
}

/**
 * The mock's tenant (URL path before `/msv3`) for one account's sandbox calls to wholesaler `id`. The
 * sandbox takes any password, so a tenant shared by all accounts would show one account's orders and
 * delivery notices to another that uses the same MSV3 user name (the README's `apotheke1`, say): each
 * account gets a world of its own, named by a hash so the account id itself shows in no mock document.
 */
export function sandboxTenant(accountId: string, id: string): string {
  const world = createHash('sha256').update(`sandbox\n${accountId}`).digest('hex').slice(0, 16);
  return `sandbox/${world}/${id}`;
}

export interface RegistryDeps {
  db: Kysely<Tables>;
  catalogue: readonly CatalogueEntry[];
  /** Base URL of the built-in sandbox mock, e.g. `http://127.0.0.1:41234` (known once it listens). */
  sandboxUrl: () => string;
  /** Where the targets of the endpoints it hands out are noted (see `TargetDirectory`). */
  targets: TargetDirectory;
}

export function createWholesalerRegistry(deps: RegistryDeps): WholesalerRegistry {
  const byId = new Map(deps.catalogue.map((entry) => [entry.id, entry]));

  function sandboxEndpoint(tenant: Tenant, id: string, version: Msv3Version): Msv3Endpoint {
    const base = deps.sandboxUrl().replace(/\/+$/, '');
    const target = deps.targets.note({
      wholesaler: id,
      route: 'sandbox',
      accountId: tenant.accountId,
      custom: false,
    });
    return { target, baseUrl: `${base}/${sandboxTenant(tenant.accountId, id)}/msv3/v${version}.0`, version };
  }

  function serverEndpoint(id: string, server: CatalogueServer, version: Msv3Version): Msv3Endpoint {
    const route = id.endsWith(TEST_SUFFIX) ? 'test_server' : 'live';
    const target = deps.targets.note({ wholesaler: id, route, accountId: null, custom: false });
    return { target, baseUrl: server.baseUrl, version, ...(server.paths ? { paths: server.paths } : {}) };
  }

  function notFound(id: string, why: string): ApiError {
    return new ApiError('wholesaler_not_found', `Unknown wholesaler ${shownId(id)}: ${why}.`, {
      wholesaler: id,
    });
  }

  async function unknownId(tenant: Tenant, id: string): Promise<ApiError> {
    const known = (await registry.list(tenant)).map((wholesaler) => wholesaler.id);
    return new ApiError('wholesaler_not_found', unknownWholesalerMessage(id, known), { wholesaler: id });
  }

  const registry: WholesalerRegistry = {
    async list(tenant) {
      const out: Wholesaler[] = [];
      for (const entry of deps.catalogue) {
        const base = { name: entry.name, verified: true, msv3_version: entry.version };
        const capabilities = capabilitiesOfVersion(entry.version);
        if (tenant.mode === 'test') {
          out.push({ id: entry.id, ...base, capabilities, route: 'sandbox' });
          if (entry.test) {
            out.push({
              id: entry.id + TEST_SUFFIX,
              ...base,
              name: `${entry.name} (test server)`,
              capabilities,
              route: 'test_server',
            });
          }
        } else if (entry.live) {
          out.push({ id: entry.id, ...base, capabilities, route: 'live' });
        }
      }
      for (const custom of await listCustomWholesalers(deps.db, tenant)) {
        const shown = {
          name: custom.name,
          endpoint: custom.endpoint,
          verified: custom.verified,
          capabilities: custom.capabilities,
          msv3_version: custom.version,
        };
        if (tenant.mode === 'test') {
          out.push({ id: custom.id, ...shown, route: 'sandbox' });
          out.push({ id: custom.id + TEST_SUFFIX, ...shown, route: 'test_server' });
        } else {
          out.push({ id: custom.id, ...shown, route: 'live' });
        }
      }
      return out;
    },

    async resolve(tenant, id) {
      const resolved = await resolveFor(tenant, id);
      resolved.endpoint.account = tenant.accountId;
      return resolved;
    },
  };

  async function resolveFor(tenant: Tenant, id: string): Promise<ResolvedWholesaler> {
    const wantsTestServer = id.endsWith(TEST_SUFFIX);
    const baseId = wantsTestServer ? id.slice(0, -TEST_SUFFIX.length) : id;
    if (wantsTestServer && tenant.mode === 'live') {
      throw notFound(id, 'test servers (`<id>_test`) are reachable with pk_test_ keys only');
    }
    const entry = byId.get(baseId);
    if (entry !== undefined) {
      const resolved = { id, name: entry.name, version: entry.version, custom: null };
      if (tenant.mode === 'test' && !wantsTestServer) {
        return extend(resolved, {
          route: 'sandbox',
          endpoint: sandboxEndpoint(tenant, baseId, entry.version),
        });
      }
      if (wantsTestServer) {
        if (!entry.test)
          throw notFound(id, `no test server is configured for ${baseId} in the wholesaler catalogue`);
        return extend(resolved, {
          route: 'test_server',
          endpoint: serverEndpoint(id, entry.test, entry.version),
        });
      }
      if (!entry.live)
        throw notFound(id, `no live endpoint is configured for ${baseId} in the wholesaler catalogue`);
      return extend(resolved, { route: 'live', endpoint: serverEndpoint(id, entry.live, entry.version) });
    }
    const custom = await findCustomWholesaler(deps.db, tenant, baseId);
    if (custom === undefined) throw await unknownId(tenant, id);
    const resolved = { id, name: custom.name, version: custom.version, custom };
    if (tenant.mode === 'test' && !wantsTestServer) {
      return extend(resolved, {
        route: 'sandbox',
        endpoint: sandboxEndpoint(tenant, baseId, custom.version),
      });
    }
    return extend(resolved, {
      route: wantsTestServer ? 'test_server' : 'live',
      endpoint: {
        target: deps.targets.note({
          wholesaler: id,
          route: wantsTestServer ? 'test_server' : 'live',
          accountId: tenant.accountId,
          custom: true,
        }),
        baseUrl: custom.endpoint,
        version: custom.version,
      },
    });
  }
  return registry;
}
