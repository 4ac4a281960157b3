import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSettings, loadConfig } from '../src/config.js';
import { errorCatalogueTable } from '../src/http/error-catalogue-doc.js';
import { createLogger } from '../src/observability/logger.js';
import { type RunningServer, startServer } from '../src/server.js';
import { until } from './until.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const doc = (name: string) => readFileSync(new URL(`../docs/${name}`, import.meta.url), 'utf8');

describe('README and docs/', () => {
  it('opens with the two commands for a fresh machine', () => {
    const firstBlock = readme.slice(
      readme.indexOf('```sh'),
      readme.indexOf('```', readme.indexOf('```sh') + 5),
    );
    expect(firstBlock).toContain('npm ci && npm start');
    expect(firstBlock).toContain('npm test');
  });

  it('documents every configuration variable with its default (docs/configuration.md)', () => {
    const configuration = doc('configuration.md');
    for (const { env, schema } of listSettings()) {
      const shown = schema.default === undefined ? '(unset)' : `\`${String(schema.default)}\``;
      expect(configuration).toContain(`| \`${env}\` | ${shown} |`);
    }
  });

  it('lists exactly the error catalogue (docs/error-catalogue.md)', () => {
    expect(doc('error-catalogue.md')).toContain(errorCatalogueTable());
  });

  it('links every docs page from the README or the docs index', () => {
    const index = doc('README.md');
    for (const name of readdirSync(new URL('../docs', import.meta.url)).filter((f) => f.endsWith('.md'))) {
      if (name === 'README.md') expect(readme).toContain('](docs/README.md)');
      else expect(index, name).toContain(`](${name})`);
    }
  });
});

/** The fields of the gateway's answers this test reads. */
interface Subscription {
  id: string;
  signing_secret: string;
}
interface AttemptResult {
  delivery_id: string;
  event_id: string;
  success: boolean;
  status_code: number | null;
}

/**
 * The receiver example of docs/webhooks.md must work as printed: it is read out of the page, its import of
 * the client package (`@msv3-gateway/client`, what a receiver installs) pointed at the client's sources,
 * type-checked (strict, as this project), and run as its own process (`node --import tsx`). A real gateway (`startServer`, temporary
 * SQLite) then delivers to it: a test ping, an order's `order.status_changed` through the outbox worker,
 * and a manual redelivery of that event (answered, not handled twice); forged requests get 400.
 */
describe('docs/webhooks.md: the verifyWebhook receiver example', () => {
  const ROOT = fileURLToPath(new URL('..', import.meta.url));
  let folder: string;
  let server: RunningServer | undefined;
  let receiver: ChildProcess | undefined;

  beforeAll(() => {
    // Inside the project (git-ignored), so `fastify` and @types/node resolve as for the project's code.
    mkdirSync(join(ROOT, '.scratch'), { recursive: true });
    folder = mkdtempSync(join(ROOT, '.scratch', 'readme-webhook-'));
  });
  afterAll(async () => {
    receiver?.kill('SIGKILL');
    await server?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  function snippet(): string {
    const page = doc('webhooks.md');
    const heading = page.indexOf('\n## Verifying a delivery\n');
    expect(heading).toBeGreaterThan(-1);
    const section = page.slice(heading);
    const from = section.indexOf('```ts');
    const code = section.slice(from + '```ts\n'.length, section.indexOf('```\n', from + 5));
    expect(code).toContain("from '@msv3-gateway/client'");
    expect(code).not.toContain('msv3-gateway/webhooks');
    // The client's check is asynchronous: without the await the receiver would accept any request.
    expect(code).toContain('await verifyWebhook(');
    return code;
  }

  it('type-checks, starts, verifies real deliveries once each and refuses forged ones', {
    timeout: 60_000,
  }, async () => {
    // `@msv3-gateway/client` is packages/client's dist/index.js, built from src/index.ts.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8'));
    expect(pkg.exports['.'].default).toBe('./dist/index.js');
    const source = snippet().replaceAll(
      "from '@msv3-gateway/client'",
      `from '${relative(folder, join(ROOT, 'packages/client/src/index.js'))}'`,
    );
    writeFileSync(join(folder, 'receiver.ts'), source);
    writeFileSync(
      join(folder, 'tsconfig.json'),
      JSON.stringify({
        extends: relative(folder, join(ROOT, 'tsconfig.json')),
        compilerOptions: { noEmit: true, rootDir: relative(folder, ROOT) },
        include: ['receiver.ts'],
      }),
    );
    const tsc = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', folder], { encoding: 'utf8' });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.status).toBe(0);

    const lines: string[] = [];
    server = await startServer({
      config: loadConfig({
        PORT: '0',
        DATABASE_URL: `sqlite:${join(folder, 'gateway.db')}`,
        ALLOW_PRIVATE_ENDPOINTS: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '100',
        WHOLESALER_PROBE_INTERVAL_MS: '0',
      }),
      logger: createLogger({ level: 'silent' }),
      print: (line) => lines.push(line),
    });
    const key = lines.join('\n').match(/pk_test_[0-9A-Za-z]{36}/)![0];
    const api = async <T>(method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server!.url}${path}`, {
        method,
        headers: {
          'x-api-key': key,
          'x-msv3-username': 'apotheke1',
          'x-msv3-password': 'sandbox-secret',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: (await response.json()) as T };
    };

    // The secret comes first (the example reads it at start), the receiver's address after.
    const created = await api<Subscription>('POST', '/v1/webhooks', {
      url: 'http://127.0.0.1:9/not-yet',
      wholesaler: 'phoenix',
      events: ['order.status_changed'],
    });
    expect(created.status).toBe(201);
    const { id, signing_secret: secret } = created.json;

    receiver = spawn(process.execPath, ['--import', 'tsx', join(folder, 'receiver.ts')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', MSV3_WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    receiver.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    receiver.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const printed = (pattern: RegExp, timeoutMs = 20_000) =>
      until(
        () => `${pattern}; the receiver printed:\n${output}`,
        () => pattern.exec(output) ?? undefined,
        timeoutMs,
      );
    const hookUrl = (await printed(/at (http:\/\/127\.0\.0\.1:\d+\/hooks\/msv3)/))[1]!;
    expect((await api('PATCH', `/v1/webhooks/${id}`, { url: hookUrl })).status).toBe(200);

    const ping = await api<AttemptResult>('POST', `/v1/webhooks/${id}/test`);
    expect(ping.json).toMatchObject({ success: true, status_code: 204 });
    await printed(new RegExp(`^ping ${ping.json.event_id}$`, 'm'));

    const order = await api<{ order_id: string }>('POST', '/v1/orders', {
      wholesaler: 'phoenix',
      items: [{ pzn: '04114918', quantity: 1 }],
    });
    expect(order.status).toBe(200);
    const [, eventId] = await printed(/^order\.status_changed (evt_\S+)$/m, 10_000);
    const log = await until(
      'the delivery delivered',
      async () => {
        const { json } = await api<{ deliveries: { id: string; event_id: string; status: string }[] }>(
          'GET',
          `/v1/webhooks/${id}/deliveries`,
        );
        const delivery = json.deliveries.find((d) => d.event_id === eventId);
        return delivery?.status === 'delivered' ? delivery : undefined;
      },
      5_000,
    );
    // Sent again by hand: accepted with 2xx, not handled a second time.
    const retried = await api<AttemptResult>('POST', `/v1/webhooks/${id}/deliveries/${log.id}/retry`);
    expect(retried.json).toMatchObject({ success: true, status_code: 204 });
    expect(output.match(/^order\.status_changed /gm)).toHaveLength(1);

    // Forged or incomplete requests are refused with the verification error's code.
    const body = JSON.stringify({ id: 'evt_forged', type: 'ping', data: {} });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const forge = async (headers: Record<string, string>) => {
      const response = await fetch(hookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      return { status: response.status, body: await response.json() };
    };
    const wrongKey = createHmac('sha256', Buffer.from('d3JvbmcgLSBub3QgdGhlIHNlY3JldA==', 'base64'))
      .update(`evt_forged.${timestamp}.${body}`)
      .digest('base64');
    expect(
      await forge({
        'webhook-id': 'evt_forged',
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${wrongKey}`,
      }),
    ).toEqual({ status: 400, body: { error: 'signature_mismatch' } });
    expect(await forge({})).toEqual({ status: 400, body: { error: 'missing_header' } });
    expect(output).not.toContain('evt_forged');
  });
});
