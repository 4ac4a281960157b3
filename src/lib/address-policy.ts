import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import {
  type AddressKind,
  classifyAddress,
  describeKind,
  effectiveAddress,
  ipv4Readings,
  ipv6Words,
  parseAddress,
} from './address-kinds.js';

/**
 * Which outbound addresses the gateway may connect to (webhook receivers, custom MSV3 endpoints); see
 * docs/security.md. Public unicast addresses always; private, loopback and other non-public unicast
 * ranges when the operator allows them (ALLOW_PRIVATE_ENDPOINTS: all of them; ALLOWED_PRIVATE_CIDRS:
 * the listed ones); link-local addresses and cloud metadata services never, whatever the settings, in
 * every form that reaches them (IPv4-mapped, -compatible and -translated IPv6, NAT64, 6to4).
 */
export interface AddressPolicy {
  judge(ip: string): AddressVerdict;
  /** The connect-time decision: `public` or `private_allowed`. */
  allowsAddress(ip: string): boolean;
  /** Host names refused whatever they resolve to: the cloud metadata services' names. */
  refusesHostName(host: string): boolean;
  /** Whether any non-public address may be called (either setting is on). */
  readonly admitsPrivate: boolean;
}

type AddressVerdict = 'public' | 'private_allowed' | 'private_refused' | 'never';

/** The shape of `config.network`, so `createAddressPolicy(config.network)` builds the gateway's policy. */
export interface AddressPolicySettings {
  allowPrivateEndpoints: boolean;
  /** CIDR ranges already checked by `parseCidr` (src/config.ts refuses bad ones at start-up). */
  allowedPrivateCidrs?: readonly string[];
}

/** Kinds that are never called: nothing answers there, or (link-local) the host's own platform does. */
const NEVER_KINDS = new Set<AddressKind>(['unspecified', 'multicast', 'broadcast', 'invalid', 'link_local']);

/**
 * Cloud instance metadata and platform services outside the link-local range (which is refused as a
 * whole; its well-known members are listed for the record): they hand out credentials to whoever on the
 * machine asks.
 */
const METADATA_ADDRESSES = [
  '169.254.169.254', // AWS, Google Cloud, Azure, Oracle, DigitalOcean, OpenStack, Hetzner …
  '169.254.170.2', // AWS ECS task metadata
  '169.254.0.23', // Tencent Cloud
  'fd00:ec2::254', // AWS IMDS over IPv6
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud (classic)
  '168.63.129.16', // Azure WireServer / host agent (a public address)
];

/** Names of metadata services; a name is refused if it is one of these or ends in `.<one of these>`. */
const METADATA_HOST_NAMES = [
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.azure.internal',
  'metadata.tencentyun.com',
  'api.metadata.cloud.ibm.com',
  'metadata.platformequinix.com',
  'metadata.packet.net',
];

const METADATA = new BlockList();
for (const address of METADATA_ADDRESSES) METADATA.addAddress(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');

export function createAddressPolicy(settings: AddressPolicySettings): AddressPolicy {
  const cidrs = settings.allowedPrivateCidrs ?? [];
  const allowed = new BlockList();
  for (const text of cidrs) {
    const cidr = parseCidr(text);
    if (!cidr.ok) throw new Error(`not a CIDR range: ${text} (${cidr.problem})`);
    allowed.addSubnet(cidr.network, cidr.prefix, cidr.family === 4 ? 'ipv4' : 'ipv6');
  }
  const judge = (ip: string): AddressVerdict => {
    if (isNeverCalled(ip)) return 'never';
    if (classifyAddress(ip) === 'public') return 'public';
    if (settings.allowPrivateEndpoints) return 'private_allowed';
    const target = effectiveAddress(ip);
    return target !== undefined && allowed.check(target.address, target.family === 4 ? 'ipv4' : 'ipv6')
      ? 'private_allowed'
      : 'private_refused';
  };
  return {
    judge,
    allowsAddress: (ip) => {
      const verdict = judge(ip);
      return verdict === 'public' || verdict === 'private_allowed';
    },
    refusesHostName: isMetadataHostName,
    admitsPrivate: settings.allowPrivateEndpoints || cidrs.length > 0,
  };
}

/** No usable address, a never-called kind, or a metadata or link-local address in any reading of `ip`. */
function isNeverCalled(ip: string): boolean {
  const parsed = parseAddress(ip);
  if (parsed === undefined || NEVER_KINDS.has(classifyAddress(ip))) return true;
  return isMetadataAddress(ip) || ipv4Readings(ip).some((v4) => classifyAddress(v4) === 'link_local');
}

function isMetadataAddress(ip: string): boolean {
  const parsed = parseAddress(ip);
  if (parsed?.family === 6 && METADATA.check(parsed.address, 'ipv6')) return true;
  return ipv4Readings(ip).some((v4) => METADATA.check(v4, 'ipv4'));
}

export function isMetadataHostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return METADATA_HOST_NAMES.some((known) => name === known || name.endsWith(`.${known}`));
}

export type CidrParse =
  | { ok: true; network: string; prefix: number; family: 4 | 6 }
  | { ok: false; problem: string };

/** `10.20.0.0/16`, `::1/128`, or a single address (a /32 or /128); the host bits must be zero. */
export function parseCidr(text: string): CidrParse {
  const [address = '', prefixText, ...extra] = text.trim().split('/');
  const family = isIP(address);
  if (extra.length > 0 || (family !== 4 && family !== 6)) {
    return { ok: false, problem: 'expected an IP address and a prefix length, e.g. 10.20.0.0/16 or ::1/128' };
  }
  const bits = family === 4 ? 32 : 128;
  const prefix =
    prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= bits)) {
    return { ok: false, problem: `the prefix length must be 0 to ${bits}` };
  }
  const bytes = addressBytes(address, family);
  const hostBitsSet = bytes.some((byte, i) => {
    const kept = Math.min(8, Math.max(0, prefix - i * 8));
    return (byte & (0xff >> kept)) !== 0;
  });
  if (hostBitsSet) return { ok: false, problem: `the address has bits set beyond the /${prefix} prefix` };
  return { ok: true, network: address, prefix, family };
}

function addressBytes(address: string, family: 4 | 6): number[] {
  if (family === 4) return address.split('.').map(Number);
  return (ipv6Words(address) ?? []).flatMap((word) => [word >> 8, word & 0xff]);
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (injected in tests; `dns.lookup` by default). */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** What checks of customer-chosen URLs need: the policy, and a host name resolver (tests; DNS otherwise). */
export interface Outbound {
  policy: AddressPolicy;
  lookup?: HostLookup;
}

export interface OutboundUrlOptions {
  /** Live keys may only use https (plain http only to private addresses the policy allows). */
  live: boolean;
  policy: AddressPolicy;
  lookup?: HostLookup;
}

export type OutboundUrlCheck =
  | { ok: true; url: URL; addresses: ResolvedAddress[]; private: boolean }
  | { ok: false; reason: 'invalid_url' | 'not_allowed'; message: string };

/**
 * Checks a caller-supplied URL before it is stored: shape, scheme, the host name, and every address it
 * resolves to. The WHATWG parser has already turned `http://2130706433/`, `http://0x7f.1/` and
 * `http://017700000001/` into `127.0.0.1`, so literal forms are judged as the address they denote.
 * Registration-time checks alone are not enough (DNS can change); connections go through the guarded
 * connector (`guarded-connector.ts`), which applies the same policy to the address actually connected to.
 *
 * Messages never show what a name resolved to (nor whether it resolved at all): they would let callers
 * map the gateway's internal DNS.
 */
export async function checkOutboundUrl(text: string, options: OutboundUrlOptions): Promise<OutboundUrlCheck> {
  const shape = checkUrlShape(text);
  if (!shape.ok) return shape;
  const { url } = shape;
  const { policy } = options;
  const host = hostOf(url);
  let addresses: ResolvedAddress[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else if (isLocalhostName(host)) {
    addresses = [{ address: '127.0.0.1', family: 4 }];
  } else if (policy.refusesHostName(host)) {
    return refuse(
      'not_allowed',
      `${host} is the name of a cloud metadata service, which this gateway never calls.`,
    );
  } else {
    addresses = await (options.lookup ?? systemLookup)(host).catch(() => []);
    if (addresses.length === 0 || addresses.some((a) => !policy.allowsAddress(a.address))) {
      return refuse('not_allowed', nameRefusal(host, policy));
    }
  }

  const literal = addresses.find((a) => !policy.allowsAddress(a.address));
  if (literal !== undefined) return refuse('not_allowed', literalRefusal(host, literal.address, policy));
  const isPrivate = addresses.some((a) => policy.judge(a.address) === 'private_allowed');
  if (options.live && url.protocol !== 'https:' && !isPrivate) {
    return refuse('not_allowed', 'Live mode needs an https URL.');
  }
  return { ok: true, url, addresses, private: isPrivate };
}

function nameRefusal(host: string, policy: AddressPolicy): string {
  return (
    `The host name ${host} does not resolve to an address this gateway calls: public addresses` +
    (policy.admitsPrivate ? ' and the private ranges the operator allows.' : ' only.')
  );
}

/** The host is an IP literal (or `localhost`), the caller's own text: naming its kind tells nothing new. */
function literalRefusal(host: string, address: string, policy: AddressPolicy): string {
  if (policy.judge(address) === 'never') {
    const kind = classifyAddress(address);
    const what = isMetadataAddress(address)
      ? 'a cloud metadata address'
      : describeKind(NEVER_KINDS.has(kind) ? kind : 'link_local');
    return `The URL points to ${what}: ${host}, which this gateway never calls.`;
  }
  return (
    `The URL points to ${describeKind(classifyAddress(address))}: ${host}. Only public addresses are allowed` +
    ' (see the ALLOW_PRIVATE_ENDPOINTS and ALLOWED_PRIVATE_CIDRS server settings).'
  );
}

/** The checks that need no DNS: absolute http(s) URL, no credentials, a host. */
export function checkUrlShape(
  text: string,
): { ok: true; url: URL } | Extract<OutboundUrlCheck, { ok: false }> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('invalid_url', 'The URL is not an absolute URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return refuse('invalid_url', 'The URL must start with https:// (or http:// in the sandbox).');
  }
  if (url.username !== '' || url.password !== '') {
    return refuse('invalid_url', 'The URL must not contain a user name or password.');
  }
  if (url.hostname === '') return refuse('invalid_url', 'The URL has no host.');
  return { ok: true, url };
}

/** The URL's host without IPv6 brackets or a trailing dot. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** RFC 6761: `localhost` and `*.localhost` are loopback whatever DNS says. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost');
}

function refuse(
  reason: 'invalid_url' | 'not_allowed',
  message: string,
): Extract<OutboundUrlCheck, { ok: false }> {
  return { ok: false, reason, message };
}
