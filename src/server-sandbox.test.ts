import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { startMockWholesaler } from './mock/index.js';
import { createLogger } from './observability/logger.js';
import { startServer } from './server.js';

async function refused(url: string): Promise<boolean> {
  return fetch(url, { method: 'POST' }).then(
    () => false,
    () => true,
  );
}

describe('startServer and the sandbox wholesaler', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-sandbox-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const logger = createLogger({ level: 'silent' });
  const configFor = (name: string, env: NodeJS.ProcessEnv = {}) =>
    loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(folder, name, 'gateway.db')}`, ...env });
  const keyIn = (lines: string[]) => lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];
  const checkAvailability = (url: string, key: string) =>
    fetch(`${url}/v1/availability`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'x-msv3-username': 'apotheke1',
        'x-msv3-password': 'secret',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn: '4114918', quantity: 1 }] }),
    });

  it('runs the built-in mock in-process on a loopback port and closes it on shutdown', async () => {
    const lines: string[] = [];
    const server = await startServer({ config: configFor('builtin'), logger, print: (l) => lines.push(l) });
    expect(server.sandboxUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines).toContain(`Sandbox wholesaler (test keys): ${server.sandboxUrl}`);
    const response = await checkAvailability(server.url, keyIn(lines));
    expect(response.status).toBe(200);
    expect(await server.close()).toEqual({ clean: true });
    expect(await refused(server.sandboxUrl)).toBe(true);
  });

  it('uses SANDBOX_URL and a replaced catalogue when the operator sets them', async () => {
    const external = await startMockWholesaler();
    const catalogue = join(folder, 'catalogue.json');
    writeFileSync(
      catalogue,
      JSON.stringify({ wholesalers: [{ id: 'phoenix', name: 'Only one', version: 2 }] }),
    );
    const lines: string[] = [];
    const server = await startServer({
      config: configFor('external', {
        SANDBOX_URL: external.url,
        WHOLESALER_CATALOGUE: catalogue,
        MSV3_CLIENT_SOFTWARE_ID: 'Apotheke Test 1.0',
      }),
      logger,
      print: (l) => lines.push(l),
    });
    try {
      expect(server.sandboxUrl).toBe(external.url);
      const key = keyIn(lines);
      const list = await fetch(`${server.url}/v1/wholesalers`, { headers: { 'x-api-key': key } });
      expect(((await list.json()) as { wholesalers: { id: string }[] }).wholesalers.map((w) => w.id)).toEqual(
        ['phoenix'],
      );
      expect((await checkAvailability(server.url, key)).status).toBe(200);
      expect(external.requestCount('verfuegbarkeitAnfragen')).toBe(1);
    } finally {
      await server.close();
      await external.close();
    }
  });

  it('refuses to start with a broken catalogue, naming the file', async () => {
    const broken = join(folder, 'broken.json');
    writeFileSync(broken, JSON.stringify({ wholesalers: [{ id: 'Bad Id', name: 'x', version: 2 }] }));
    await expect(
      startServer({ config: configFor('broken', { WHOLESALER_CATALOGUE: broken }), logger }),
    ).rejects.toThrow(/wholesaler catalogue .*broken\.json/);
  });
});
