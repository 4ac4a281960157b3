import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/db.js';
import { ApiError } from '../core/errors.js';
import { manualClock } from '../lib/clock.js';
import { createAccount } from '../store/accounts.js';
import { upsertCustomWholesaler } from '../store/custom-wholesalers.js';
import { loadCatalogue, parseCatalogue } from './catalogue.js';
import { createWholesalerRegistry, sandboxTenant } from './registry.js';
import { createTargetDirectory } from './target.js';

const catalogue = parseCatalogue({
  wholesalers: [
    {
      id: 'phoenix',
      name: 'PHOENIX',
      version: 2,
      live: { baseUrl: 'https://live.example/msv3/v2.0' },
      test: { baseUrl: 'https://test.example/msv3/v2.0', paths: { lieferavis: '/Lieferavis' } },
    },
    { id: 'gehe', name: 'GEHE', version: 1, live: { baseUrl: 'https://gehe.example/msv3/v1.0' } },
    { id: 'aep', name: 'AEP', version: 2 },
  ],
});

describeEachDialect('wholesaler registry', (getDatabase) => {
  const clock = manualClock();
  const targets = createTargetDirectory();
  const registryFor = () =>
    createWholesalerRegistry({
      db: getDatabase().db,
      catalogue,
      sandboxUrl: () => 'http://127.0.0.1:9999',
      targets,
    });

  it('routes test keys to the sandbox mock, with a tenant path per account and wholesaler, and its version', async () => {
    const tenant = { accountId: 'acct_x', mode: 'test' as const };
    const phoenix = await registryFor().resolve(tenant, 'phoenix');
    expect(phoenix.route).toBe('sandbox');
    expect(sandboxTenant('acct_x', 'phoenix')).toMatch(/^sandbox\/[0-9a-f]{16}\/phoenix$/);
    expect(phoenix.endpoint.baseUrl).toBe(
      `http://127.0.0.1:9999/${sandboxTenant('acct_x', 'phoenix')}/msv3/v2.0`,
    );
    const gehe = await registryFor().resolve(tenant, 'gehe');
    expect(gehe.endpoint.baseUrl).toBe(`http://127.0.0.1:9999/${sandboxTenant('acct_x', 'gehe')}/msv3/v1.0`);
    expect(gehe.version).toBe(1);
  });

  it('routes `<id>_test` with a test key to the configured test server, and refuses it without one', async () => {
    const tenant = { accountId: 'acct_x', mode: 'test' as const };
    const resolved = await registryFor().resolve(tenant, 'phoenix_test');
    expect(resolved.route).toBe('test_server');
    expect(resolved.endpoint).toMatchObject({
      baseUrl: 'https://test.example/msv3/v2.0',
      target: 'phoenix_test',
    });
    expect(resolved.endpoint.paths?.lieferavis).toBe('/Lieferavis');
    await expect(registryFor().resolve(tenant, 'gehe_test')).rejects.toThrow(/no test server/);
  });

  it('routes live keys to live endpoints and refuses test servers and unconfigured wholesalers', async () => {
    const tenant = { accountId: 'acct_x', mode: 'live' as const };
    expect((await registryFor().resolve(tenant, 'phoenix')).endpoint.baseUrl).toBe(
      'https://live.example/msv3/v2.0',
    );
    await expect(registryFor().resolve(tenant, 'phoenix_test')).rejects.toThrow(/pk_test_ keys only/);
    await expect(registryFor().resolve(tenant, 'aep')).rejects.toThrow(/no live endpoint/);
    const error = await registryFor()
      .resolve(tenant, 'nobody')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
  });

  it('shows custom wholesalers only to the account and mode that registered them', async () => {
    const { db } = getDatabase();
    const a = await createAccount(db, clock, { name: 'A' });
    const b = await createAccount(db, clock, { name: 'B' });
    await upsertCustomWholesaler(
      db,
      clock,
      { accountId: a.id, mode: 'live' },
      {
        id: 'custom-hausapotheke-ab12cd',
        name: 'Hausapotheke',
        endpoint: 'https://msv3.hausapotheke.example/msv3/v2.0',
        version: 2,
      },
    );
    const registry = registryFor();
    const mine = await registry.resolve({ accountId: a.id, mode: 'live' }, 'custom-hausapotheke-ab12cd');
    expect(mine.route).toBe('live');
    expect(mine.custom?.endpoint).toBe('https://msv3.hausapotheke.example/msv3/v2.0');
    await expect(
      registry.resolve({ accountId: b.id, mode: 'live' }, 'custom-hausapotheke-ab12cd'),
    ).rejects.toThrow(ApiError);
    await expect(
      registry.resolve({ accountId: a.id, mode: 'test' }, 'custom-hausapotheke-ab12cd'),
    ).rejects.toThrow(ApiError);
    const listed = await registry.list({ accountId: b.id, mode: 'live' });
    expect(listed.map((w) => w.id)).toEqual(['phoenix', 'gehe']);
  });

  it('answers an unknown id with the closest known id and the ids this key can use, custom ones included', async () => {
    const { db } = getDatabase();
    const account = await createAccount(db, clock, { name: 'Typo' });
    const tenant = { accountId: account.id, mode: 'test' as const };
    await upsertCustomWholesaler(db, clock, tenant, {
      id: 'custom-hausapotheke-ab12cd',
      name: 'Hausapotheke',
      endpoint: 'https://msv3.hausapotheke.example/msv3/v2.0',
      version: 2,
    });
    const message = async (id: string) =>
      (
        (await registryFor()
          .resolve(tenant, id)
          .catch((e: unknown) => e)) as ApiError
      ).message;
    const known =
      'Known ids: phoenix, phoenix_test, gehe, aep, custom-hausapotheke-ab12cd, custom-hausapotheke-ab12cd_test.';
    expect(await message('phonix')).toBe(`Unknown wholesaler \`phonix\`. Did you mean \`phoenix\`? ${known}`);
    expect(await message('custom-hausapotheke')).toBe(
      `Unknown wholesaler \`custom-hausapotheke\`. Did you mean \`custom-hausapotheke-ab12cd\`? ${known}`,
    );
    expect(await message('sanacorp')).toBe(`Unknown wholesaler \`sanacorp\`. ${known}`);
    const long = await message(`${'x'.repeat(500)}\``);
    expect(long.length).toBeLessThan(300);
    expect(long).not.toContain('x'.repeat(41));
  });

  it('names the calling account on every endpoint, for its fair share of the shared live slots', async () => {
    const registry = registryFor();
    const live = await registry.resolve({ accountId: 'acct_a', mode: 'live' }, 'phoenix');
    const other = await registry.resolve({ accountId: 'acct_b', mode: 'live' }, 'phoenix');
    expect([live.endpoint.target, live.endpoint.account]).toEqual(['phoenix', 'acct_a']);
    expect([other.endpoint.target, other.endpoint.account]).toEqual(['phoenix', 'acct_b']);
    expect((await registry.resolve({ accountId: 'acct_c', mode: 'test' }, 'phoenix')).endpoint.account).toBe(
      'acct_c',
    );
  });

  it('names one breaker target per account for the sandbox and one per endpoint for real servers', async () => {
    const registry = registryFor();
    const target = async (accountId: string, mode: 'test' | 'live', id: string) =>
      (await registry.resolve({ accountId, mode }, id)).endpoint.target;
    expect(await target('acct_a', 'test', 'phoenix')).toBe('sandbox/acct_a/phoenix');
    expect(await target('acct_b', 'test', 'phoenix')).toBe('sandbox/acct_b/phoenix');
    // Each endpoint's target is noted, so a breaker change of its key is told by wholesaler and account.
    expect(targets.find(await target('acct_b', 'test', 'phoenix'))).toEqual({
      wholesaler: 'phoenix',
      route: 'sandbox',
      accountId: 'acct_b',
      custom: false,
    });
    // The sandbox's tenant (URL) is per account too: accounts never see each other's sandbox data.
    const urlOf = async (accountId: string) =>
      (await registry.resolve({ accountId, mode: 'test' }, 'phoenix')).endpoint.baseUrl;
    expect(await urlOf('acct_b')).toBe(
      `http://127.0.0.1:9999/${sandboxTenant('acct_b', 'phoenix')}/msv3/v2.0`,
    );
    expect(await urlOf('acct_a')).not.toBe(await urlOf('acct_b'));
    for (const account of ['acct_a', 'acct_b']) {
      expect(await target(account, 'test', 'phoenix_test')).toBe('phoenix_test');
      expect(await target(account, 'live', 'phoenix')).toBe('phoenix');
    }
  });

  it('lists sandbox ids and test-server ids for test keys', async () => {
    const listed = await registryFor().list({ accountId: 'acct_none', mode: 'test' });
    expect(listed.map((w) => `${w.id}:${w.route}`)).toEqual([
      'phoenix:sandbox',
      'phoenix_test:test_server',
      'gehe:sandbox',
      'aep:sandbox',
    ]);
    expect(listed.find((w) => w.id === 'gehe')?.capabilities).not.toContain('deliveries');
  });
});

describe('wholesaler catalogue', () => {
  it('loads the shipped catalogue', () => {
    const entries = loadCatalogue();
    expect(entries.map((e) => e.id)).toContain('phoenix');
  });

  it('refuses duplicates and malformed entries, naming the problem', () => {
    const entry = { id: 'x', name: 'X', version: 2 };
    expect(() => parseCatalogue({ wholesalers: [entry, entry] })).toThrow(/duplicate id x/);
    expect(() => parseCatalogue({ wholesalers: [{ ...entry, version: 3 }] })).toThrow(/wholesalers\/0/);
    expect(() => parseCatalogue({ wholesalers: [{ ...entry, id: 'Bad_Id' }] })).toThrow(/wholesalers\/0\/id/);
  });
});
