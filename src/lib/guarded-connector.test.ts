import { createServer, type Server, type Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy, type HostLookup } from './address-policy.js';
import { AddressNotAllowedError, createGuardedConnector } from './guarded-connector.js';

type ConnectResult = { socket: Socket } | { error: Error & { code?: string } };

function connectThrough(connector: buildConnector.connector, url: string): Promise<ConnectResult> {
  const { hostname, host, protocol, port } = new URL(url);
  return new Promise((resolve) => {
    connector({ hostname, host, protocol, port, servername: null } as never, (error, socket) => {
      resolve(error ? { error } : { socket: socket as Socket });
    });
  });
}

/** A socket opener that never opens one: it counts, and fails the connection. */
function countingOpener(): buildConnector.connector & { calls: number } {
  const opener = Object.assign(
    ((_options, callback) => {
      opener.calls++;
      callback(new Error('the test opener opens no sockets'), null);
    }) as buildConnector.connector,
    { calls: 0 },
  );
  return opener;
}

const allowAll = createAddressPolicy({ allowPrivateEndpoints: true });

describe('createGuardedConnector', () => {
  let listener: Server;
  let port: number;
  let accepted = 0;
  beforeAll(async () => {
    listener = createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  it('refuses a name that resolves to a link-local address before any socket is opened', async () => {
    const opener = countingOpener();
    const lookups: string[] = [];
    const lookup: HostLookup = async (host) => {
      lookups.push(host);
      return [{ address: '169.254.169.254', family: 4 }];
    };
    const connector = createGuardedConnector({
      connectTimeoutMs: 1_000,
      policy: allowAll,
      lookup,
      openSocket: opener,
    });
    const result = await connectThrough(connector, 'http://rebind.example/');
    expect(lookups).toEqual(['rebind.example']);
    expect(opener.calls).toBe(0);
    expect(result).toMatchObject({ error: { code: 'ADDRESS_NOT_ALLOWED' } });
    if (!('error' in result)) throw new Error('expected a refusal');
    expect(result.error).toBeInstanceOf(AddressNotAllowedError);
    expect(result.error.message).toBe('connecting to rebind.example is not allowed by the address policy');
  });

  it.each([
    'http://169.254.169.254/',
    'http://169.254.170.2/',
    'http://[fe80::1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::169.254.169.254]/',
    'http://[64:ff9b::169.254.169.254]/',
    'http://[64:ff9b:1::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[fd00:ec2::254]/',
    'http://100.100.100.200/',
    'http://[::ffff:100.100.100.200]/',
    'http://192.0.0.192/',
    'http://168.63.129.16/',
  ])('refuses the literal %s with private endpoints allowed, opening no socket', async (url) => {
    const opener = countingOpener();
    const connector = createGuardedConnector({
      connectTimeoutMs: 1_000,
      policy: allowAll,
      openSocket: opener,
    });
    expect(await connectThrough(connector, url)).toMatchObject({ error: { code: 'ADDRESS_NOT_ALLOWED' } });
    expect(opener.calls).toBe(0);
  });

  it.each([
    'metadata.google.internal',
    'METADATA.google.internal.',
    'metadata',
    'instance-data',
    'metadata.azure.com',
  ])('refuses the metadata name %s without resolving it', async (name) => {
    const opener = countingOpener();
    let lookups = 0;
    const lookup: HostLookup = async () => {
      lookups++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const connector = createGuardedConnector({
      connectTimeoutMs: 1_000,
      policy: allowAll,
      lookup,
      openSocket: opener,
    });
    expect(await connectThrough(connector, `http://${name}:${port}/`)).toMatchObject({
      error: { code: 'ADDRESS_NOT_ALLOWED' },
    });
    expect({ lookups, opened: opener.calls }).toEqual({ lookups: 0, opened: 0 });
  });

  it('connects to an allowed address of a name, skipping the refused ones, resolving once', async () => {
    let lookups = 0;
    const lookup: HostLookup = async () => {
      lookups++;
      return [
        { address: '169.254.169.254', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ];
    };
    const connector = createGuardedConnector({ connectTimeoutMs: 1_000, policy: allowAll, lookup });
    const before = accepted;
    const result = await connectThrough(connector, `http://receiver.example:${port}/`);
    if (!('socket' in result)) throw result.error;
    expect(result.socket.remoteAddress).toBe('127.0.0.1');
    result.socket.destroy();
    await expect.poll(() => accepted).toBe(before + 1);
    expect(lookups).toBe(1); // the socket got the checked addresses, not a second answer
  });

  it('applies an ALLOWED_PRIVATE_CIDRS list: an address inside is connected to, one outside refused', async () => {
    const policy = createAddressPolicy({
      allowPrivateEndpoints: false,
      allowedPrivateCidrs: ['127.0.0.0/30'],
    });
    const opener = countingOpener();
    const connector = createGuardedConnector({ connectTimeoutMs: 1_000, policy });
    const refusing = createGuardedConnector({ connectTimeoutMs: 1_000, policy, openSocket: opener });
    const inside = await connectThrough(connector, `http://127.0.0.1:${port}/`);
    if (!('socket' in inside)) throw inside.error;
    inside.socket.destroy();
    expect(await connectThrough(refusing, `http://127.0.0.5:${port}/`)).toMatchObject({
      error: { code: 'ADDRESS_NOT_ALLOWED' },
    });
    expect(opener.calls).toBe(0);
  });
});
