import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which outbound addresses the gateway may connect to (webhook targets, custom MSV3 endpoints).
 * Public unicast only, unless the operator sets ALLOW_PRIVATE_ENDPOINTS. Ranges follow the IANA
 * special-purpose registries; IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4) are judged
 * by the embedded address, so `::ffff:127.0.0.1` is loopback.
 */
export type AddressKind =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared' // CGNAT 100.64/10
  | 'link_local'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'invalid';

const V4_RANGES: [string, number, AddressKind][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** IPv6 outside 2000::/3 is not global unicast; inside it, these are still special. */
const V6_RANGES: [string, number, AddressKind][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'link_local'], // deprecated site-local
  ['fc00::', 7, 'private'], // unique local
  ['ff00::', 8, 'multicast'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['2001::', 23, 'reserved'], // IETF protocol assignments: Teredo, benchmarking, ORCHID
  ['5f00::', 16, 'reserved'], // SRv6 SIDs
  ['64:ff9b:1::', 48, 'private'], // local-use NAT64
  ['100::', 64, 'reserved'], // discard-only
];

function rangeTable(ranges: [string, number, AddressKind][], type: 'ipv4' | 'ipv6') {
  return ranges.map(([network, prefix, kind]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, type);
    return { list, kind };
  });
}

const V4_TABLE = rangeTable(V4_RANGES, 'ipv4');
const V6_TABLE = rangeTable(V6_RANGES, 'ipv6');
const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet('2000::', 3, 'ipv6');

/** What kind of address `ip` is (an IP literal without brackets; a zone id is ignored). */
export function classifyAddress(ip: string): AddressKind {
  const address = ip.replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return classifyV4(address);
  if (family !== 6) return 'invalid';
  const embedded = embeddedIPv4(address);
  if (embedded !== undefined) {
    const kind = classifyV4(embedded.ipv4);
    // NAT64/6to4 carrying a public IPv4 address route like it; IPv4-compatible (::a.b.c.d) is deprecated.
    return embedded.compatible && kind === 'public' ? 'reserved' : kind;
  }
  for (const { list, kind } of V6_TABLE) if (list.check(address, 'ipv6')) return kind;
  return GLOBAL_UNICAST_V6.check(address, 'ipv6') ? 'public' : 'reserved';
}

export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

/** Addresses nothing can be sent to even when private endpoints are allowed. */
const NEVER_ALLOWED = new Set<AddressKind>(['unspecified', 'multicast', 'broadcast', 'invalid']);

/** The connect-time decision: public addresses, or any unicast address if private ones are allowed. */
export function isAllowedAddress(ip: string, options: { allowPrivate: boolean }): boolean {
  const kind = classifyAddress(ip);
  return kind === 'public' || (options.allowPrivate && !NEVER_ALLOWED.has(kind));
}

function classifyV4(address: string): AddressKind {
  for (const { list, kind } of V4_TABLE) if (list.check(address, 'ipv4')) return kind;
  return 'public';
}

/**
 * The IPv4 address inside an IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96),
 * IPv4-compatible (::/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address.
 */
function embeddedIPv4(address: string): { ipv4: string; compatible: boolean } | undefined {
  const w = ipv6Words(address);
  if (w === undefined) return undefined;
  const zeros = (from: number, to: number) => w.slice(from, to).every((word) => word === 0);
  const v4 = (high: number, low: number, compatible = false) => ({
    ipv4: `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`,
    compatible,
  });
  if (zeros(0, 5) && w[5] === 0xffff) return v4(w[6]!, w[7]!);
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return v4(w[6]!, w[7]!);
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4(w[6]!, w[7]!);
  if (w[0] === 0x2002) return v4(w[1]!, w[2]!);
  if (zeros(0, 6) && (w[6] !== 0 || w[7]! > 1)) return v4(w[6]!, w[7]!, true);
  return undefined;
}

/** Eight 16-bit words of an IPv6 literal (accepts `::` and a trailing dotted quad). */
export function ipv6Words(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const tail: number[] = [];
  const dotted = text.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    if (isIP(dotted[2]!) !== 4) return undefined;
    const [a, b, c, d] = dotted[2]!.split('.').map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    text = dotted[1]!.endsWith('::') ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((w) => Number.parseInt(w, 16)));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - tail.length - head.length - rest.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const words = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest, ...tail];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff)
    ? words
    : undefined;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (injected in tests; `dns.lookup` by default). */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface OutboundUrlOptions {
  /** Live keys may only use https (plain http only to private addresses when those are allowed). */
  live: boolean;
  /** The operator's ALLOW_PRIVATE_ENDPOINTS. */
  allowPrivate: boolean;
  lookup?: HostLookup;
}

export type OutboundUrlCheck =
  | { ok: true; url: URL; addresses: ResolvedAddress[]; private: boolean }
  | { ok: false; reason: 'invalid_url' | 'not_allowed'; message: string };

/**
 * Checks a caller-supplied URL before it is stored: shape, scheme, and every address its host resolves
 * to. The WHATWG parser has already turned `http://2130706433/`, `http://0x7f.1/` and `http://017700000001/`
 * into `127.0.0.1`, so literal forms are judged as the address they denote. Registration-time checks alone
 * are not enough (DNS can change); connections must also go through a connector that applies
 * `isAllowedAddress` to the address actually connected to.
 */
export async function checkOutboundUrl(text: string, options: OutboundUrlOptions): Promise<OutboundUrlCheck> {
  const shape = checkUrlShape(text);
  if (!shape.ok) return shape;
  const { url } = shape;
  const host = hostOf(url);
  let addresses: ResolvedAddress[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else if (isLocalhostName(host)) {
    addresses = [{ address: '127.0.0.1', family: 4 }];
  } else {
    try {
      addresses = await (options.lookup ?? systemLookup)(host);
    } catch {
      return refuse('not_allowed', `The host name ${host} does not resolve.`);
    }
    if (addresses.length === 0) return refuse('not_allowed', `The host name ${host} does not resolve.`);
  }

  const blocked = addresses.find((a) => !isPublicAddress(a.address));
  const isPrivate = blocked !== undefined;
  if (blocked !== undefined) {
    const kind = classifyAddress(blocked.address);
    const where = isIP(host) !== 0 ? host : `${host} (${blocked.address})`;
    if (!options.allowPrivate || NEVER_ALLOWED.has(kind)) {
      return refuse(
        'not_allowed',
        `The URL points to ${describeKind(kind)}: ${where}. Only public addresses are allowed` +
          (NEVER_ALLOWED.has(kind) ? '.' : ' (see the ALLOW_PRIVATE_ENDPOINTS server setting).'),
      );
    }
  }
  if (options.live && url.protocol !== 'https:' && !isPrivate) {
    return refuse('not_allowed', 'Live mode needs an https URL.');
  }
  return { ok: true, url, addresses, private: isPrivate };
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
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

const KIND_LABELS: Record<AddressKind, string> = {
  public: 'a public address',
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  shared: 'a shared (CGNAT) address',
  link_local: 'a link-local address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  reserved: 'a reserved address',
  invalid: 'an invalid address',
};

export function describeKind(kind: AddressKind): string {
  return KIND_LABELS[kind];
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
