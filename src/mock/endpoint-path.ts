import type { Msv3Version } from '../msv3/envelope.js';

/**
 * What the URL path tells the mock. Everything before the first `/msv3` segment names a tenant, so one
 * server can play several wholesalers with separate state: `/sandbox/phoenix/msv3/v2.0/bestellen` is
 * tenant `sandbox/phoenix`, `/msv3/v2.0/bestellen` (or a path without `/msv3`) the default tenant ''.
 * A `v1`/`v1.0`/`v2`/`v2.0` segment right after `/msv3` makes that URL speak only that version, like
 * separate JAX-WS deployments per version. The rest of the path (the service name) does not matter:
 * the operation comes from the body. Matching is case-insensitive; tenants are lower-cased.
 */

export interface EndpointPath {
  tenant: string;
  version?: Msv3Version;
}

export function parseEndpointPath(rawPath: string): EndpointPath {
  const pathname = rawPath.split('?', 1)[0]!.toLowerCase();
  const segments = pathname.split('/').filter((s) => s !== '');
  const at = segments.indexOf('msv3');
  if (at === -1) return { tenant: '' };
  const tenant = segments.slice(0, at).map(safeDecode).join('/');
  const match = /^v([12])(\.0)?$/.exec(segments[at + 1] ?? '');
  return match === null ? { tenant } : { tenant, version: Number(match[1]) as Msv3Version };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Which wholesaler a tenant plays: the last segment of its name (`sandbox/<world>/phoenix` plays
 * `phoenix`), '' for the default tenant. The sandbox's per-wholesaler scenario articles use it.
 */
export function wholesalerOfTenant(tenant: string): string {
  return tenant.slice(tenant.lastIndexOf('/') + 1);
}

/** The base URL of a tenant's endpoint, the inverse of `parseEndpointPath`. */
export function tenantBaseUrl(origin: string, tenant: string, version: Msv3Version): string {
  const prefix = tenant
    .split('/')
    .filter((s) => s !== '')
    .map(encodeURIComponent)
    .join('/');
  return `${origin}${prefix === '' ? '' : `/${prefix}`}/msv3/v${version}.0`;
}

/**
 * The control surface's path (`control.ts`): `/<tenant>/control/<action>`, apart from `/msv3` so that no
 * SOAP client reaches it by accident. Undefined for any other path.
 */
export function parseControlPath(rawPath: string): { tenant: string; action: string } | undefined {
  const pathname = rawPath.split('?', 1)[0]!.toLowerCase();
  const segments = pathname.split('/').filter((s) => s !== '');
  if (segments.length < 2 || segments[segments.length - 2] !== 'control' || segments.includes('msv3')) {
    return undefined;
  }
  return { tenant: segments.slice(0, -2).map(safeDecode).join('/'), action: segments[segments.length - 1]! };
}
