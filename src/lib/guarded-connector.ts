import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector, errors } from 'undici';
import type { AddressPolicy, HostLookup, ResolvedAddress } from './address-policy.js';
import { systemLookup } from './address-policy.js';

/**
 * The one refusal of every guarded outbound connection (webhook deliveries, custom MSV3 endpoints). Its
 * message names the host as the caller wrote it, never an address the host resolved to.
 */
export class AddressNotAllowedError extends Error {
  readonly code = 'ADDRESS_NOT_ALLOWED';

  constructor(readonly host: string) {
    super(`connecting to ${host} is not allowed by the address policy`);
    this.name = 'AddressNotAllowedError';
  }
}

/** What the connector asks of the policy (`address-policy.ts`; tests may pass a narrower one). */
export type ConnectPolicy = Pick<AddressPolicy, 'allowsAddress' | 'refusesHostName'>;

export interface GuardedConnectorOptions {
  /** For the name resolution and, separately, for the TCP/TLS connection. */
  connectTimeoutMs: number;
  policy: ConnectPolicy;
  lookup?: HostLookup;
  /** Opens the socket once the host has passed the policy; undici's connector by default (tests count). */
  openSocket?: buildConnector.connector;
}

/**
 * An undici connector for every outbound connection to an address a customer chose (docs/security.md).
 * IP literals are judged as they are; a host name is first refused if it names a metadata service, then
 * resolved, and only the addresses the policy allows are handed to the socket (through its DNS lookup,
 * so Happy Eyeballs still picks among them): the address checked is the address connected to, whatever
 * DNS answers later (no rebinding). A host with no allowed address fails before any socket exists.
 */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const { policy } = options;
  const resolve = options.lookup ?? systemLookup;
  const allowedAddresses = (hostname: string) =>
    withTimeout(resolve(hostname), options.connectTimeoutMs, hostname).then((addresses) =>
      addresses.filter((a) => policy.allowsAddress(a.address)),
    );
  // Handed from the connector to the socket's lookup, which Node calls synchronously inside `connect`.
  let handoff: { hostname: string; addresses: ResolvedAddress[] } | undefined;
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    const given = handoff?.hostname === hostname ? handoff.addresses : undefined;
    handoff = undefined;
    // Without a handoff (another caller of this lookup), the addresses are checked all the same.
    (given === undefined ? allowedAddresses(hostname) : Promise.resolve(given)).then(
      (addresses) => {
        const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const wanted: LookupAddress[] = addresses.filter((a) => family === 0 || a.family === family);
        const first = wanted[0];
        if (first === undefined) callback(new AddressNotAllowedError(hostname), '', 0);
        else if (lookupOptions.all) callback(null, wanted);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
  const openSocket = options.openSocket ?? buildConnector({ timeout: options.connectTimeoutMs, lookup });

  return (connectOptions, callback) => {
    const hostname = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    const refuse = () => callback(new AddressNotAllowedError(hostname), null);
    if (isIP(hostname) !== 0) {
      // Node skips the lookup for IP literals.
      if (policy.allowsAddress(hostname)) openSocket(connectOptions, callback);
      else refuse();
      return;
    }
    if (policy.refusesHostName(hostname)) return refuse();
    allowedAddresses(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return refuse();
        handoff = { hostname, addresses };
        try {
          openSocket(connectOptions, callback);
        } finally {
          handoff = undefined;
        }
      },
      (error: Error) => callback(error, null),
    );
  };
}

function withTimeout(
  resolving: Promise<ResolvedAddress[]>,
  timeoutMs: number,
  hostname: string,
): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new errors.ConnectTimeoutError(`resolving ${hostname} took over ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  return Promise.race([resolving, timeout]).finally(() => clearTimeout(timer));
}
