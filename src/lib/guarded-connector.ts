import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { type HostLookup, systemLookup } from './address-policy.js';

export class AddressNotAllowedError extends Error {
  readonly code = 'ADDRESS_NOT_ALLOWED';

  constructor(readonly address: string) {
    super(`connecting to ${address} is not allowed by the address policy`);
    this.name = 'AddressNotAllowedError';
  }
}

/**
 * An undici connector whose DNS lookup drops addresses `allow` refuses, so the address that was checked
 * is the one the socket connects to (no DNS rebinding between check and use). Node skips the lookup for
 * IP literals, so those are checked before connecting.
 */
export function createGuardedConnector(options: {
  connectTimeoutMs: number;
  allow: (address: string) => boolean;
  lookup?: HostLookup;
}): buildConnector.connector {
  const lookup = guardedLookup(options.allow, options.lookup ?? systemLookup);
  const connect = buildConnector({ timeout: options.connectTimeoutMs, lookup });
  return (connectOptions, callback) => {
    if (isIP(connectOptions.hostname) !== 0 && !options.allow(connectOptions.hostname)) {
      callback(new AddressNotAllowedError(connectOptions.hostname), null);
      return;
    }
    connect(connectOptions, callback);
  };
}

function guardedLookup(allow: (address: string) => boolean, resolve: HostLookup): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const wanted = lookupOptions.family
          ? addresses.filter((a) => a.family === lookupOptions.family)
          : addresses;
        const allowed: LookupAddress[] = wanted.filter((a) => allow(a.address));
        const first = allowed[0];
        if (first === undefined) {
          callback(new AddressNotAllowedError(wanted[0]?.address ?? hostname), '', 0);
        } else if (lookupOptions.all) {
          callback(null, allowed);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
