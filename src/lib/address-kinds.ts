import { BlockList, isIP } from 'node:net';

/**
 * What kind of address an IP literal is. Ranges follow the IANA special-purpose registries; IPv6 forms
 * that embed an IPv4 address (mapped, translated, compatible, NAT64, 6to4) are judged by the embedded
 * address, so `::ffff:127.0.0.1` is loopback. The decision what may be called is `address-policy.ts`.
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

/** An IP literal without brackets or zone id, and its family; undefined if it is none. */
export function parseAddress(ip: string): { address: string; family: 4 | 6 } | undefined {
  const address = ip.replace(/%.*$/, '');
  const family = isIP(address);
  return family === 4 || family === 6 ? { address, family } : undefined;
}

/** What kind of address `ip` is (an IP literal without brackets; a zone id is ignored). */
export function classifyAddress(ip: string): AddressKind {
  const parsed = parseAddress(ip);
  if (parsed === undefined) return 'invalid';
  if (parsed.family === 4) return classifyV4(parsed.address);
  const words = ipv6Words(parsed.address);
  const embedded = words && embeddedIPv4(words);
  if (embedded !== undefined) {
    const kind = classifyV4(embedded.ipv4);
    // NAT64/6to4 carrying a public IPv4 address route like it; IPv4-compatible (::a.b.c.d) is deprecated.
    return embedded.compatible && kind === 'public' ? 'reserved' : kind;
  }
  for (const { list, kind } of V6_TABLE) if (list.check(parsed.address, 'ipv6')) return kind;
  return GLOBAL_UNICAST_V6.check(parsed.address, 'ipv6') ? 'public' : 'reserved';
}

export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

/**
 * The address a connection to `ip` ends up at, as far as this host can tell: the embedded IPv4 address
 * of the forms `classifyAddress` judges by it, else `ip` itself (without zone id).
 */
export function effectiveAddress(ip: string): { address: string; family: 4 | 6 } | undefined {
  const parsed = parseAddress(ip);
  if (parsed === undefined || parsed.family === 4) return parsed;
  const words = ipv6Words(parsed.address);
  const embedded = words && embeddedIPv4(words);
  return embedded === undefined ? parsed : { address: embedded.ipv4, family: 4 };
}

/**
 * Every IPv4 address `ip` may stand for: itself, or for IPv6 each embedded reading. Besides the forms
 * `classifyAddress` knows, the local-use NAT64 prefix 64:ff9b:1::/48 may carry an IPv4 address at any
 * of the RFC 6052 positions its operator chose (/48, /56, /64 or /96): all of them are returned, so a
 * refusal can cover every reading.
 */
export function ipv4Readings(ip: string): string[] {
  const parsed = parseAddress(ip);
  if (parsed === undefined) return [];
  if (parsed.family === 4) return [parsed.address];
  const words = ipv6Words(parsed.address);
  if (words === undefined) return [];
  const readings = new Set<string>();
  const embedded = embeddedIPv4(words);
  if (embedded !== undefined) readings.add(embedded.ipv4);
  if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) {
    const bytes = words.flatMap((word) => [word >> 8, word & 0xff]);
    // RFC 6052 §2.2: the IPv4 octets by prefix length; octet 8 (bits 64–71) is always skipped.
    for (const positions of [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ]) {
      readings.add(positions.map((i) => bytes[i]).join('.'));
    }
  }
  return [...readings];
}

function classifyV4(address: string): AddressKind {
  for (const { list, kind } of V4_TABLE) if (list.check(address, 'ipv4')) return kind;
  return 'public';
}

/**
 * The IPv4 address inside an IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96),
 * IPv4-compatible (::/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address.
 */
function embeddedIPv4(w: number[]): { ipv4: string; compatible: boolean } | undefined {
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
