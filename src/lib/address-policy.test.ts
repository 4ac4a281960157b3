import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AddressKind, classifyAddress, ipv6Words, isPublicAddress } from './address-kinds.js';
import {
  checkOutboundUrl,
  createAddressPolicy,
  type HostLookup,
  isMetadataHostName,
  parseCidr,
} from './address-policy.js';

const resolvesTo =
  (...addresses: string[]): HostLookup =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const noDns: HostLookup = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

describe('classifyAddress', () => {
  it.each<[string, AddressKind]>([
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['2606:4700:4700::1111', 'public'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fec0::1', 'link_local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['64:ff9b:1::1', 'private'],
    ['4000::1', 'reserved'],
    ['not an ip', 'invalid'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each<[string, AddressKind]>([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2002:808:808::1', 'public'],
  ])('judges %s by its embedded IPv4 address (%s)', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('treats every IPv4-mapped form of a private address like the address itself', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const [a, b, c, d] = ip.split('.').map(Number) as [number, number, number, number];
        const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        expect(classifyAddress(`::ffff:${ip}`)).toBe(classifyAddress(ip));
        expect(classifyAddress(hex)).toBe(classifyAddress(ip));
      }),
    );
  });

  it('parses IPv6 text forms into eight words', () => {
    expect(ipv6Words('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(ipv6Words('1::8')).toEqual([1, 0, 0, 0, 0, 0, 0, 8]);
    expect(ipv6Words('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(ipv6Words('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(ipv6Words('1:2:3')).toBeUndefined();
    expect(ipv6Words('1::2::3')).toBeUndefined();
  });

  it('says 8.8.8.8 is public', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
  });
});

/** Every IPv6 spelling of an IPv4 address that reaches it (or is judged by it). */
function ipv6Forms(ip: string): string[] {
  const [a, b, c, d] = ip.split('.').map(Number) as [number, number, number, number];
  const high = ((a << 8) | b).toString(16);
  const low = ((c << 8) | d).toString(16);
  return [
    `::ffff:${ip}`,
    `::ffff:${high}:${low}`,
    `::ffff:0:${high}:${low}`,
    `::${ip}`,
    `64:ff9b::${high}:${low}`,
    `64:ff9b:1::${high}:${low}`,
    `2002:${high}:${low}::1`,
  ];
}

describe('createAddressPolicy', () => {
  const strict = createAddressPolicy({ allowPrivateEndpoints: false });
  const permissive = createAddressPolicy({ allowPrivateEndpoints: true });
  const everything = createAddressPolicy({
    allowPrivateEndpoints: true,
    allowedPrivateCidrs: ['0.0.0.0/0', '::/0'],
  });
  const linkLocalV4 = fc
    .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
    .map(([c, d]) => `169.254.${c}.${d}`);

  it('allows private addresses only when told to, and never unspecified, multicast or broadcast ones', () => {
    expect(strict.allowsAddress('8.8.8.8')).toBe(true);
    expect(strict.allowsAddress('127.0.0.1')).toBe(false);
    expect(permissive.allowsAddress('127.0.0.1')).toBe(true);
    expect(permissive.allowsAddress('fd00::1')).toBe(true);
    for (const address of ['0.0.0.0', '::', '224.0.0.1', '255.255.255.255', 'ff02::1']) {
      expect(permissive.allowsAddress(address)).toBe(false);
    }
  });

  it.each([
    '169.254.169.254',
    '169.254.170.2',
    '169.254.0.1',
    'fe80::1',
    'fe80::a9fe:a9fe%eth0',
    'febf::1',
    'fd00:ec2::254',
    'fd00:ec2:0:0:0:0:0:254',
    '100.100.100.200',
    '192.0.0.192',
    '168.63.129.16',
    '::ffff:a9fe:a9fe',
    '::ffff:100.100.100.200',
  ])('never allows %s, whatever the settings', (address) => {
    for (const policy of [strict, permissive, everything]) {
      expect(policy.judge(address)).toBe('never');
    }
  });

  it('never allows a link-local IPv4 address in any IPv6 form (property)', () => {
    fc.assert(
      fc.property(linkLocalV4, (ip) => {
        for (const form of [ip, ...ipv6Forms(ip)])
          expect({ form, verdict: everything.judge(form) }).toEqual({ form, verdict: 'never' });
      }),
    );
  });

  it('judges the IPv6 forms of a private IPv4 address like the address itself (property)', () => {
    const listed = createAddressPolicy({
      allowPrivateEndpoints: false,
      allowedPrivateCidrs: ['10.20.0.0/16'],
    });
    const inside = fc
      .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
      .map(([c, d]) => `10.20.${c}.${d}`);
    const outside = fc
      .tuple(fc.integer({ min: 21, max: 255 }), fc.integer({ min: 0, max: 255 }))
      .map(([b, c]) => `10.${b}.${c}.1`);
    fc.assert(
      fc.property(inside, outside, (yes, no) => {
        // The local-use NAT64 prefix is private in itself; the list speaks of IPv4 ranges.
        for (const form of [yes, ...ipv6Forms(yes).filter((f) => !f.startsWith('64:ff9b:1:'))]) {
          expect({ form, verdict: listed.judge(form) }).toEqual({ form, verdict: 'private_allowed' });
        }
        for (const form of [no, ...ipv6Forms(no)]) {
          expect({ form, verdict: listed.judge(form) }).toEqual({ form, verdict: 'private_refused' });
        }
      }),
    );
  });

  it('allows exactly the ALLOWED_PRIVATE_CIDRS ranges when ALLOW_PRIVATE_ENDPOINTS is off', () => {
    const policy = createAddressPolicy({
      allowPrivateEndpoints: false,
      allowedPrivateCidrs: ['10.20.0.0/16', '127.0.0.0/8', '::1/128', '169.254.0.0/16'],
    });
    expect(policy.admitsPrivate).toBe(true);
    expect(policy.judge('10.20.3.4')).toBe('private_allowed');
    expect(policy.judge('10.21.0.1')).toBe('private_refused');
    expect(policy.judge('192.168.1.1')).toBe('private_refused');
    expect(policy.judge('127.0.0.1')).toBe('private_allowed');
    expect(policy.judge('::1')).toBe('private_allowed');
    expect(policy.judge('::2')).toBe('never'); // ::2 reads as the IPv4-compatible 0.0.0.2
    expect(policy.judge('fd00::1')).toBe('private_refused');
    expect(policy.judge('8.8.8.8')).toBe('public');
    expect(policy.judge('169.254.1.1')).toBe('never'); // listing link-local changes nothing
    expect(strict.admitsPrivate).toBe(false);
  });

  it.each([
    ['10.20.0.0/16', { ok: true, network: '10.20.0.0', prefix: 16, family: 4 }],
    [' ::1/128 ', { ok: true, network: '::1', prefix: 128, family: 6 }],
    ['192.168.1.7', { ok: true, network: '192.168.1.7', prefix: 32, family: 4 }],
    ['fd12:3456::/32', { ok: true, network: 'fd12:3456::', prefix: 32, family: 6 }],
    ['0.0.0.0/0', { ok: true, network: '0.0.0.0', prefix: 0, family: 4 }],
  ])('parses the CIDR %s', (text, parsed) => {
    expect(parseCidr(text)).toEqual(parsed);
  });

  it.each([
    ['10.20.0.0/33', 'the prefix length must be 0 to 32'],
    ['::1/129', 'the prefix length must be 0 to 128'],
    ['10.20.1.0/16', 'the address has bits set beyond the /16 prefix'],
    ['10.20.0.0/', 'the prefix length must be 0 to 32'],
    ['10.20.0.0/1x', 'the prefix length must be 0 to 32'],
    ['intranet/8', 'expected an IP address and a prefix length, e.g. 10.20.0.0/16 or ::1/128'],
    ['10.0.0.0/8/8', 'expected an IP address and a prefix length, e.g. 10.20.0.0/16 or ::1/128'],
  ])('refuses the CIDR %s', (text, problem) => {
    expect(parseCidr(text)).toEqual({ ok: false, problem });
  });

  it('knows the metadata services by name, subdomains and a trailing dot included', () => {
    for (const name of [
      'metadata.google.internal',
      'Metadata.Google.Internal.',
      'metadata',
      'x.metadata.goog',
    ]) {
      expect({ name, refused: isMetadataHostName(name) }).toEqual({ name, refused: true });
    }
    for (const name of ['metadata.example', 'mymetadata.google.internal.example', 'pharmacy.example']) {
      expect({ name, refused: isMetadataHostName(name) }).toEqual({ name, refused: false });
    }
  });
});

describe('checkOutboundUrl', () => {
  const publicDns = resolvesTo('93.184.216.34');
  const strict = createAddressPolicy({ allowPrivateEndpoints: false });
  const permissive = createAddressPolicy({ allowPrivateEndpoints: true });
  const sandbox = { live: false, policy: strict, lookup: publicDns };

  it('accepts a public https URL and normalises it', async () => {
    const check = await checkOutboundUrl('HTTPS://Pharmacy.Example/hooks?x=1', { ...sandbox, live: true });
    expect(check).toMatchObject({ ok: true, private: false });
    expect(check.ok && check.url.href).toBe('https://pharmacy.example/hooks?x=1');
  });

  it('needs https for live keys, but accepts http in the sandbox', async () => {
    expect(await checkOutboundUrl('http://pharmacy.example/', { ...sandbox, live: true })).toMatchObject({
      ok: false,
      reason: 'not_allowed',
      message: 'Live mode needs an https URL.',
    });
    expect(await checkOutboundUrl('http://pharmacy.example/', sandbox)).toMatchObject({ ok: true });
  });

  it.each([
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://127.1/',
    'http://0/',
    'http://0.0.0.0:8080/',
    'http://[::]/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://10.0.0.1/',
    'http://192.168.0.1/',
    'http://224.0.0.1/',
    'http://198.51.100.1/',
    'http://localhost/',
    'http://LOCALHOST./',
    'http://api.localhost/',
  ])('refuses %s by default', async (url) => {
    const check = await checkOutboundUrl(url, sandbox);
    expect(check).toMatchObject({ ok: false, reason: 'not_allowed' });
    expect(check.ok || check.message).toMatch(/address/);
  });

  it('refuses a host name that resolves to a loopback address without saying what it resolved to', async () => {
    const check = await checkOutboundUrl('https://rebind.example/', {
      ...sandbox,
      lookup: resolvesTo('127.0.0.1'),
    });
    expect(check).toEqual({
      ok: false,
      reason: 'not_allowed',
      message:
        'The host name rebind.example does not resolve to an address this gateway calls: public addresses only.',
    });
  });

  it('answers a name that does not resolve like one that resolves to a refused address', async () => {
    const refusals = await Promise.all(
      [resolvesTo('10.1.2.3'), resolvesTo('169.254.169.254'), noDns, resolvesTo()].map((lookup) =>
        checkOutboundUrl('https://internal.example/', { ...sandbox, lookup }),
      ),
    );
    expect(new Set(refusals.map((check) => JSON.stringify(check))).size).toBe(1);
    expect(JSON.stringify(refusals[0])).not.toMatch(/10\.1\.2\.3|169\.254|ENOTFOUND/);
  });

  it('refuses a host name if any of its addresses is private', async () => {
    const lookup = resolvesTo('93.184.216.34', '::ffff:10.0.0.1');
    expect(await checkOutboundUrl('https://mixed.example/', { ...sandbox, lookup })).toMatchObject({
      ok: false,
    });
  });

  it('with ALLOW_PRIVATE_ENDPOINTS admits private addresses, and plain http to them even for live keys', async () => {
    const allowed = { live: true, policy: permissive, lookup: resolvesTo('10.1.2.3') };
    expect(await checkOutboundUrl('http://127.0.0.1:9000/hook', allowed)).toMatchObject({
      ok: true,
      private: true,
    });
    expect(await checkOutboundUrl('http://wholesaler.internal/', allowed)).toMatchObject({
      ok: true,
      private: true,
    });
    expect(
      await checkOutboundUrl('http://pharmacy.example/', { ...allowed, lookup: publicDns }),
    ).toMatchObject({
      ok: false,
      message: 'Live mode needs an https URL.',
    });
    expect(await checkOutboundUrl('http://0.0.0.0/', allowed)).toMatchObject({ ok: false });
    expect(await checkOutboundUrl('http://224.0.0.1/', allowed)).toMatchObject({ ok: false });
  });

  it.each([
    [
      'http://169.254.169.254/latest/meta-data/',
      'The URL points to a cloud metadata address: 169.254.169.254, which this gateway never calls.',
    ],
    ['http://[fe80::1]/', 'The URL points to a link-local address: fe80::1, which this gateway never calls.'],
    [
      'http://[::ffff:169.254.169.254]/',
      'The URL points to a cloud metadata address: ::ffff:a9fe:a9fe, which this gateway never calls.',
    ],
    [
      'http://metadata.google.internal/computeMetadata/v1/',
      'metadata.google.internal is the name of a cloud metadata service, which this gateway never calls.',
    ],
  ])('refuses %s even with ALLOW_PRIVATE_ENDPOINTS', async (url, message) => {
    const lookup = resolvesTo('10.0.0.1');
    expect(await checkOutboundUrl(url, { live: false, policy: permissive, lookup })).toEqual({
      ok: false,
      reason: 'not_allowed',
      message,
    });
  });

  it('refuses a name that resolves to a link-local address even with ALLOW_PRIVATE_ENDPOINTS', async () => {
    const lookup = resolvesTo('10.0.0.1', 'fe80::1');
    expect(
      await checkOutboundUrl('http://mixed.example/', { live: false, policy: permissive, lookup }),
    ).toEqual({
      ok: false,
      reason: 'not_allowed',
      message:
        'The host name mixed.example does not resolve to an address this gateway calls: public addresses and the private ranges the operator allows.',
    });
  });

  it('admits the ALLOWED_PRIVATE_CIDRS ranges, plain http included, and refuses others', async () => {
    const policy = createAddressPolicy({
      allowPrivateEndpoints: false,
      allowedPrivateCidrs: ['10.20.0.0/16'],
    });
    const options = { live: true, policy, lookup: resolvesTo('10.20.0.5') };
    expect(await checkOutboundUrl('http://erp.example/hooks', options)).toMatchObject({
      ok: true,
      private: true,
    });
    expect(await checkOutboundUrl('http://10.20.9.9/hooks', options)).toMatchObject({
      ok: true,
      private: true,
    });
    expect(await checkOutboundUrl('http://10.21.0.1/hooks', options)).toMatchObject({
      ok: false,
      message:
        'The URL points to a private address: 10.21.0.1. Only public addresses are allowed (see the ALLOW_PRIVATE_ENDPOINTS and ALLOWED_PRIVATE_CIDRS server settings).',
    });
  });

  it.each([
    ['not a url', 'The URL is not an absolute URL.'],
    ['/relative', 'The URL is not an absolute URL.'],
    ['ftp://pharmacy.example/', 'The URL must start with https:// (or http:// in the sandbox).'],
    ['file:///etc/passwd', 'The URL must start with https:// (or http:// in the sandbox).'],
    ['https://user:pw@pharmacy.example/', 'The URL must not contain a user name or password.'],
  ])('refuses the malformed URL %s', async (url, message) => {
    expect(await checkOutboundUrl(url, sandbox)).toEqual({ ok: false, reason: 'invalid_url', message });
  });
});
