import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryHeaders } from '../../../src/webhooks/sign.js';
import { generateSigningSecret } from '../../../src/webhooks/subscriptions/secrets.js';
import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import { type Gateway, startGateway, TEST_CREDENTIALS } from '../../../test/gateway.js';
import { whilePackingClient } from './pack-lock.js';

const run = promisify(execFile);
const PACKAGE_DIR = new URL('..', import.meta.url).pathname;

// What a user gets: `npm pack` of the client (prepack builds it with the root tsc), installed from the
// tarball alone into an empty folder (--offline: it has no dependencies to fetch), used by a plain ESM
// script against a live gateway.

const SCRIPT = `
import { createClient, isGatewayError, verifyWebhook } from '@msv3-gateway/client';
const { URL: url, KEY: apiKey, USERNAME: username, PASSWORD: password, BODY, HEADERS, SECRET } = process.env;
const client = createClient({ baseUrl: url, apiKey, credentials: { username, password } });
const health = await client.getHealth();
const order = await client.placeOrder({ body: { wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 1 }] } });
const missing = await client.getWebhook({ id: 'wh_missing' }).catch((error) => error);
const event = await verifyWebhook(BODY, JSON.parse(HEADERS), SECRET);
console.log(JSON.stringify({ health: health.status, order: order.status, missing: isGatewayError(missing, 'webhook_not_found'), event: event.id }));
`;

describe('npm pack of the client', () => {
  let folder: string;
  let database: TestDatabase;
  let gw: Gateway;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-client-pack-'));
    database = await createTestDatabase('sqlite');
    gw = await startGateway({ database });
  });
  afterAll(async () => {
    await gw?.close();
    await database?.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  it('installs from the tarball alone in an empty folder and works there', { timeout: 120_000 }, async () => {
    const packed = await whilePackingClient(() =>
      run('npm', ['pack', '--json', '--pack-destination', folder], { cwd: PACKAGE_DIR }),
    );
    const [{ filename, files }] = JSON.parse(packed.stdout) as [
      { filename: string; files: { path: string }[] },
    ];
    const paths = files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'package.json']));
    expect(
      paths.filter((p) => p.includes('.test.') || p.startsWith('src/') || p.startsWith('test/')),
    ).toEqual([]);

    const app = join(folder, 'app');
    rmSync(app, { recursive: true, force: true });
    await run('mkdir', ['-p', app]);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'receiver', private: true, type: 'module' }),
    );
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(folder, filename)], {
      cwd: app,
    });
    writeFileSync(join(app, 'main.js'), SCRIPT);

    const url = await gw.app.listen({ host: '127.0.0.1', port: 0 });
    const secret = generateSigningSecret();
    const body = JSON.stringify({ id: 'evt_pack', type: 'ping', data: {} });
    const headers = deliveryHeaders({
      eventId: 'evt_pack',
      eventType: 'ping',
      deliveryId: 'whd_pack',
      attempt: 1,
      body,
      secrets: [secret],
      timestampSeconds: Math.floor(Date.now() / 1000),
      userAgent: 'msv3-gateway/test',
    });
    const { stdout } = await run('node', ['main.js'], {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        URL: url,
        KEY: gw.keys.test.secret,
        USERNAME: TEST_CREDENTIALS.username,
        PASSWORD: TEST_CREDENTIALS.password,
        BODY: body,
        HEADERS: JSON.stringify(headers),
        SECRET: secret,
      },
    });
    expect(JSON.parse(stdout)).toEqual({
      health: 'ok',
      order: 'confirmed',
      missing: true,
      event: 'evt_pack',
    });
  });
});
