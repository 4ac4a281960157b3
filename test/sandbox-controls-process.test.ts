import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../src/webhooks/test-support/receiver.js';
import { verifyWebhook } from '../src/webhooks/verify.js';
import { gatewayProcessEnv, startGatewayProcess, testKeyOn } from './gateway-process.js';
import { until } from './until.js';

/**
 * The test helpers in a real gateway process (`serve`, its in-process sandbox on a SQLite file): a
 * helper's event is recorded through the server's own wiring (the status feed → the one announcer; the
 * notices' first sighting) and shows in `GET /v1/events` without any other call.
 */
describe('test helpers in a gateway process', () => {
  let folder: string | undefined;
  const children: ChildProcess[] = [];
  let receiver: Receiver | undefined;
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await receiver?.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it('takes the sandbox wholesaler down and up, and delivers with shortages: the events show in GET /v1/events and reach a subscription for every wholesaler and event', {
    timeout: 120_000,
  }, async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-test-helpers-'));
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    const key = await testKeyOn(databaseUrl);
    const gateway = await startGatewayProcess(
      gatewayProcessEnv(databaseUrl, {
        // The receiver below listens on loopback.
        ALLOW_PRIVATE_ENDPOINTS: 'true',
      }),
      children,
      60_000,
    );
    const call = async (path: string, body?: object, credentials = false) => {
      const response = await fetch(`${gateway.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          'x-api-key': key,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(credentials ? { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'geheim' } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const events = async (type: string) =>
      ((await call(`/v1/events?type=${type}`)).body.events as { data: Record<string, unknown> }[]).map(
        (e) => e.data,
      );
    const eventually = (type: string, count: number) =>
      until(
        `${count} ${type} events`,
        async () => {
          const found = await events(type);
          return found.length >= count && found;
        },
        10_000,
        50,
      );

    receiver = await startReceiver();
    const subscribed = await call('/v1/webhooks', { url: receiver.url, wholesaler: '*', events: ['*'] });
    expect(subscribed.status).toBe(201);

    const down = await call('/v1/test_helpers/wholesalers/phoenix/down', {});
    expect(down).toEqual({ status: 200, body: { wholesaler: 'phoenix', status: 'down', changed: true } });
    const availability = { wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 1 }] };
    const failed = await call('/v1/availability', availability, true);
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ error: 'wholesaler_unavailable', upstream: { http_status: 503 } });
    const up = await call('/v1/test_helpers/wholesalers/phoenix/up', {});
    expect(up.body).toMatchObject({ status: 'up', changed: true });
    expect((await call('/v1/availability', availability, true)).status).toBe(200);
    const statuses = await eventually('wholesaler.status_changed', 2);
    // Newest first.
    expect(statuses.map((d) => [d.wholesaler, d.status])).toEqual([
      ['phoenix', 'up'],
      ['phoenix', 'down'],
    ]);

    const placed = await call('/v1/orders', availability, true);
    expect(placed.status).toBe(200);
    const delivered = await call(`/v1/test_helpers/orders/${placed.body.order_id as string}/deliver`, {
      shortages: true,
    });
    expect(delivered.status).toBe(200);
    const [notice] = delivered.body.deliveries as { tracking_number: string }[];
    const shortages = await eventually('delivery.shortage', 1);
    expect(shortages.map((d) => d.tracking_number)).toEqual([notice!.tracking_number]);

    // The `*` subscription got every one of them, signed, whatever their wholesaler and type.
    const secret = subscribed.body.signing_secret as string;
    const feed = (await call('/v1/events?limit=100')).body.events as { id: string }[];
    const sent = (await receiver.waitFor(feed.length, 10_000)).map(
      (request) => verifyWebhook(request.body, request.headers, secret).id,
    );
    expect(new Set(sent)).toEqual(new Set(feed.map((e) => e.id)));
    gateway.child.kill('SIGTERM');
  });
});
