import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AddressKind,
  checkOutboundUrl,
  classifyAddress,
  type HostLookup,
  ipv6Words,
  isAllowedAddress,
  isPublicAddress,
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

  it('allows private addresses only when told to, and never unspecified, multicast or broadcast ones', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isAllowedAddress('127.0.0.1', { allowPrivate: false })).toBe(false);
    expect(isAllowedAddress('127.0.0.1', { allowPrivate: true })).toBe(true);
    expect(isAllowedAddress('fd00::1', { allowPrivate: true })).toBe(true);
    for (const address of ['0.0.0.0', '::', '224.0.0.1', '255.255.255.255', 'ff02::1']) {
      expect(isAllowedAddress(address, { allowPrivate: true })).toBe(false);
    }
  });
});

describe('checkOutboundUrl', () => {
  const publicDns = resolvesTo('93.184.216.34');
  const sandbox = { live: false, allowPrivate: false, lookup: publicDns };

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

  it('refuses a host name that resolves to a loopback address, naming both', async () => {
    const check = await checkOutboundUrl('https://rebind.example/', {
      ...sandbox,
      lookup: resolvesTo('127.0.0.1'),
    });
    expect(check).toEqual({
      ok: false,
      reason: 'not_allowed',
      message:
        'The URL points to a loopback address: rebind.example (127.0.0.1). Only public addresses are allowed (see the ALLOW_PRIVATE_ENDPOINTS server setting).',
    });
  });

  it('refuses a host name if any of its addresses is private', async () => {
    const lookup = resolvesTo('93.184.216.34', '::ffff:10.0.0.1');
    expect(await checkOutboundUrl('https://mixed.example/', { ...sandbox, lookup })).toMatchObject({
      ok: false,
    });
  });

  it('refuses a host name that does not resolve', async () => {
    expect(await checkOutboundUrl('https://nowhere.example/', { ...sandbox, lookup: noDns })).toMatchObject({
      ok: false,
      message: 'The host name nowhere.example does not resolve.',
    });
  });

  it('with ALLOW_PRIVATE_ENDPOINTS admits private addresses, and plain http to them even for live keys', async () => {
    const allowed = { live: true, allowPrivate: true, lookup: resolvesTo('10.1.2.3') };
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
    ['not a url', 'The URL is not an absolute URL.'],
    ['/relative', 'The URL is not an absolute URL.'],
    ['ftp://pharmacy.example/', 'The URL must start with https:// (or http:// in the sandbox).'],
    ['file:///etc/passwd', 'The URL must start with https:// (or http:// in the sandbox).'],
    ['https://user:pw@pharmacy.example/', 'The URL must not contain a user name or password.'],
  ])('refuses the malformed URL %s', async (url, message) => {
    expect(await checkOutboundUrl(url, sandbox)).toEqual({ ok: false, reason: 'invalid_url', message });
  });
});
