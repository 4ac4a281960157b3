import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { manualClock } from '../lib/clock.js';
import { type MockWholesaler, startMockWholesaler } from '../mock/index.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { probeRequest } from '../msv3/probe-request.js';
import { createAccount } from '../store/accounts.js';
import { upsertCustomWholesaler } from '../store/custom-wholesalers.js';
import { type Database, openDatabase } from '../store/database.js';
import { migrateToLatest } from '../store/migrate.js';
import { createUpstream, defaultClientSoftwareId, type Upstream } from './upstream.js';

const CREDENTIALS = { username: 'apotheke1', password: 'sandbox-secret' };

describe('createUpstream', () => {
  let mock: MockWholesaler;
  let database: Database;
  let upstream: Upstream;
  const mockLog: string[] = [];
  beforeAll(async () => {
    mock = await startMockWholesaler({ log: (line) => mockLog.push(line) });
    database = await openDatabase('sqlite::memory:');
    await migrateToLatest(database);
    const liveUrl = mock.baseUrl({ tenant: 'live/phoenix' });
    upstream = createUpstream({
      config: loadConfig({ ALLOW_PRIVATE_ENDPOINTS: 'false' }),
      db: database.db,
      catalogue: [{ id: 'phoenix', name: 'PHOENIX', version: 2, live: { baseUrl: liveUrl } }],
      sandboxUrl: () => mock.url,
    });
  });
  afterAll(async () => {
    await upstream.close();
    await mock.close();
    await database.close();
  });

  it('notes the endpoint of every call, through either client, for the status monitor', async () => {
    expect(upstream.endpointsInUse()).toEqual([]);
    const account = await createAccount(database.db, manualClock(), { name: 'Apotheke' });
    const tenant = { accountId: account.id, mode: 'live' as const };
    const customUrl = mock.baseUrl({ tenant: 'custom/nord' });
    await upsertCustomWholesaler(database.db, manualClock(), tenant, {
      id: 'custom-nord-abc123',
      name: 'Nord',
      endpoint: customUrl,
      version: 2,
    });
    const trusted = (await upstream.deps.registry.resolve(tenant, 'phoenix')).endpoint;
    const custom = (await upstream.deps.registry.resolve(tenant, 'custom-nord-abc123')).endpoint;
    const request = { clientSoftwareId: 'test' };
    expect((await upstream.deps.client.call(verbindungTesten, trusted, CREDENTIALS, request)).ok).toBe(true);
    // Loopback is not allowed for customer-registered endpoints here: the call fails, but it was made.
    expect((await upstream.deps.customClient.call(verbindungTesten, custom, CREDENTIALS, request)).ok).toBe(
      false,
    );
    expect(upstream.endpointsInUse()).toEqual([
      {
        target: 'phoenix',
        custom: false,
        wholesaler: 'phoenix',
        mode: 'live',
        url: `${trusted.baseUrl}/verbindungTesten`,
        version: 2,
      },
      {
        target: custom.target,
        custom: true,
        wholesaler: 'custom-nord-abc123',
        mode: 'live',
        accountId: account.id,
        url: `${customUrl}/verbindungTesten`,
        version: 2,
      },
    ]);
  });

  it('probes a custom endpoint through the address-restricted transport, a catalogue one through the trusted', async () => {
    const url = `${mock.baseUrl({ tenant: 'live/phoenix' })}/verbindungTesten`;
    expect(await upstream.probe({ target: 'phoenix', custom: false, url, version: 2 })).toMatchObject({
      up: true,
      status: 401,
    });
    expect(
      await upstream.probe({ target: 'custom/acct_1/custom-nord-abc123', custom: true, url, version: 2 }),
    ).toMatchObject({
      up: false,
      error: { reason: 'unreachable', code: 'ADDRESS_NOT_ALLOWED' },
    });
  });

  it('probes with verbindungTesten in the endpoint’s MSV3 version, named by the client software id, without credentials', async () => {
    const seen: { body: string; contentType?: string; authorization?: string }[] = [];
    const wholesaler = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        seen.push({
          body,
          contentType: req.headers['content-type'],
          authorization: req.headers.authorization,
        });
        res.writeHead(401, { 'www-authenticate': 'Basic realm="MSV3"' }).end();
      });
    });
    await new Promise<void>((resolve) => wholesaler.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = wholesaler.address() as AddressInfo;
      for (const version of [1, 2] as const) {
        const url = `http://127.0.0.1:${port}/v${version}/verbindungTesten`;
        expect(
          await upstream.probe({ target: `gehe-${version}`, custom: false, url, version }),
        ).toMatchObject({
          up: true,
          status: 401,
        });
      }
      expect(seen).toEqual(
        ([1, 2] as const).map((version) => ({
          body: probeRequest(version, defaultClientSoftwareId()).body,
          contentType: `application/soap+xml; charset=utf-8; action="urn:msv3:v${version}:Msv3:verbindungTesten"`,
          authorization: undefined,
        })),
      );
    } finally {
      await new Promise((resolve) => wholesaler.close(resolve));
    }
  });

  it('probes the sandbox through the trusted transport, one request per tenant URL probed at once', async () => {
    const url = `${mock.baseUrl({ tenant: 'sandbox/phoenix' })}/verbindungTesten`;
    const probes = () => mockLog.filter((line) => line.startsWith('POST /sandbox/phoenix/')).length;
    const before = probes();
    const targets = ['sandbox/acct_1/phoenix', 'sandbox/acct_2/phoenix', 'sandbox/acct_3/phoenix'];
    const results = await Promise.all(
      targets.map((target) => upstream.probe({ target, custom: false, url, version: 2 })),
    );
    // Loopback is refused for custom endpoints here, so `up` also shows the sandbox's transport.
    expect(results.map((r) => r.up)).toEqual([true, true, true]);
    expect(probes() - before).toBe(1);
    await upstream.probe({ target: targets[0]!, custom: false, url, version: 2 });
    expect(probes() - before).toBe(2);

    // Each account's own tenant URL (as the registry names it) gets its own request: one tenant may be
    // down (a test helper) while the server answers the others.
    const perAccount = targets.map((target, i) => ({
      target,
      custom: false,
      url: `${mock.baseUrl({ tenant: `sandbox/${i}abc/phoenix` })}/verbindungTesten`,
      version: 2 as const,
    }));
    const tenantProbes = () =>
      mockLog.filter((line) => /^POST \/sandbox\/\dabc\/phoenix\//.test(line)).length;
    const tenantResults = await Promise.all(perAccount.map((input) => upstream.probe(input)));
    expect(tenantResults.map((r) => r.up)).toEqual([true, true, true]);
    expect(tenantProbes()).toBe(3);

    // A shared failure names each caller's own target.
    const closed = `${mock.baseUrl({ tenant: 'sandbox/phoenix' }).replace(/:\d+/, ':9')}/verbindungTesten`;
    const failed = await Promise.all(
      targets.map((target) => upstream.probe({ target, custom: false, url: closed, version: 2 })),
    );
    expect(failed.map((r) => [r.up, r.error?.target])).toEqual(targets.map((target) => [false, target]));
  });
});
