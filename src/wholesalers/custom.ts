import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tenant } from '../core/caller.js';
import { ApiError } from '../core/errors.js';
import { type AddressPolicy, checkOutboundUrl, type HostLookup } from '../lib/address-policy.js';
import type { Clock } from '../lib/clock.js';
import type { Msv3Version } from '../msv3/envelope.js';
import {
  type CustomWholesaler,
  deleteCustomWholesaler,
  listCustomWholesalers,
  upsertCustomWholesaler,
} from '../store/custom-wholesalers.js';
import type { Tables } from '../store/schema.js';
import type { Wholesaler } from './registry.js';

/**
 * POST /v1/wholesalers/custom: an account registers its own MSV3 endpoint (docs/wholesalers.md
 * "Custom wholesalers").
 *
 * Id derivation (docs/wholesalers.md "Custom wholesalers"): `custom-<slug of the name>-<6 hex of
 * SHA-256(account, mode, endpoint)>`, e.g. `custom-hausapotheke-nord-3f9a1c`. The slug is the name in lower
 * case, umlauts spelt out (ä → ae, ß → ss), other accents dropped, every run of other characters a `-`, at
 * most 24 characters (`wholesaler` if nothing is left). The id is stable and readable, and differs between
 * accounts and modes. Registering an endpoint the owner has registered before returns that wholesaler
 * unchanged (its first name and id), so registration is idempotent; naming another MSV3 version for it is 409
 * `conflict`.
 *
 * URL rules: absolute http(s), no user name or password, no query or fragment (service paths are
 * appended to it). Live keys need https. The host must pass the outbound address policy
 * (docs/security.md): public addresses, private ones only where the operator allows them (which also
 * admits plain http to them), link-local and cloud metadata addresses never; the custom-endpoint
 * transport repeats that check on every connection (DNS may change).
 */

/** Per account and mode: `GET /v1/wholesalers` lists them all, unpaginated. */
export const MAX_CUSTOM_WHOLESALERS = 100;

export interface CustomWholesalerDeps {
  db: Kysely<Tables>;
  clock: Clock;
  addressPolicy: AddressPolicy;
  lookup?: HostLookup;
}

export interface CustomWholesalerInput {
  name: string;
  endpoint: string;
  msv3_version?: Msv3Version;
}

export async function registerCustomWholesaler(
  deps: CustomWholesalerDeps,
  tenant: Tenant,
  input: CustomWholesalerInput,
): Promise<Wholesaler> {
  const endpoint = await checkedEndpoint(deps, tenant, input.endpoint);
  const registered = await listCustomWholesalers(deps.db, tenant);
  const known = registered.find((w) => w.endpoint === endpoint);
  if (known !== undefined) {
    // The name is only a label, but the version decides how every call is encoded: never ignore it.
    if (input.msv3_version !== undefined && input.msv3_version !== known.version) {
      throw new ApiError(
        'conflict',
        `This endpoint is already registered as ${known.id} with MSV3 version ${known.version}; register the version ${input.msv3_version} service under its own URL.`,
        { param: 'msv3_version' },
      );
    }
    return shown(known, tenant);
  }
  if (registered.length >= MAX_CUSTOM_WHOLESALERS) {
    throw new ApiError(
      'conflict',
      `An account can register at most ${MAX_CUSTOM_WHOLESALERS} custom wholesalers per mode.`,
    );
  }

  const name = input.name.trim();
  const id = customWholesalerId(tenant, name, endpoint);
  const saved = await upsertCustomWholesaler(deps.db, deps.clock, tenant, {
    id,
    name,
    endpoint,
    version: input.msv3_version ?? 2,
  });
  if (saved.endpoint !== endpoint) {
    // Two endpoints with the same slug and hash prefix: vanishingly rare, but never return the wrong one.
    throw new ApiError(
      'conflict',
      `The id ${id} is taken by another endpoint; register it under another name.`,
    );
  }
  return shown(saved, tenant);
}

/**
 * DELETE /v1/wholesalers/custom/{id}: the owner's registration is gone at once for every gateway
 * process (the registry reads it from the database on every request, it keeps no copy). What was done
 * through it stays: stored orders and delivery notices keep their data and their wholesaler id (their
 * status is then answered with 404 `wholesaler_not_found`, see `orderStatus`), and registering the same
 * endpoint again gives the same id back, unverified. The status monitor stops probing it by its next
 * round (`wholesalers/status/watch.ts`).
 */
export async function removeCustomWholesaler(
  deps: Pick<CustomWholesalerDeps, 'db'>,
  tenant: Tenant,
  id: string,
): Promise<void> {
  if (await deleteCustomWholesaler(deps.db, tenant, id)) return;
  throw new ApiError(
    'wholesaler_not_found',
    `No custom wholesaler '${id}' is registered by this account in this mode (catalogue wholesalers cannot be deleted; \`<id>_test\` is a route of \`<id>\`, not a registration of its own).`,
    { wholesaler: id, param: 'id' },
  );
}

export function customWholesalerId(tenant: Tenant, name: string, endpoint: string): string {
  const hash = createHash('sha256').update(`${tenant.accountId}\n${tenant.mode}\n${endpoint}`).digest('hex');
  return `custom-${slugOf(name)}-${hash.slice(0, 6)}`;
}

export function slugOf(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/ä/g, 'ae')
    .replace(/ö/g, 'oe')
    .replace(/ü/g, 'ue')
    .replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 24)
    .replace(/-+$/, '');
  return slug === '' ? 'wholesaler' : slug;
}

/** Validates the URL and returns its canonical form (lower-case host, no default port, no trailing `/`). */
async function checkedEndpoint(deps: CustomWholesalerDeps, tenant: Tenant, text: string): Promise<string> {
  const check = await checkOutboundUrl(text, {
    live: tenant.mode === 'live',
    policy: deps.addressPolicy,
    ...(deps.lookup === undefined ? {} : { lookup: deps.lookup }),
  });
  if (!check.ok) {
    const kind = check.reason === 'invalid_url' ? 'invalid_request' : 'endpoint_not_allowed';
    throw new ApiError(kind, `endpoint: ${check.message}`, { param: 'endpoint' });
  }
  const { url } = check;
  if (url.search !== '' || url.hash !== '') {
    throw new ApiError(
      'invalid_request',
      'endpoint: the URL must not have a query or fragment; give the base URL, e.g. https://host/msv3/v2.0.',
      { param: 'endpoint' },
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function shown(custom: CustomWholesaler, tenant: Tenant): Wholesaler {
  return {
    id: custom.id,
    name: custom.name,
    endpoint: custom.endpoint,
    verified: custom.verified,
    capabilities: custom.capabilities,
    msv3_version: custom.version,
    route: tenant.mode === 'test' ? 'sandbox' : 'live',
  };
}
