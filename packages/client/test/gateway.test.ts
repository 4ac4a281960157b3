import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../../../src/webhooks/test-support/receiver.js';
import { createTestDatabase, type TestDatabase } from '../../../test/db.js';
import { type Gateway, startGateway, TEST_CREDENTIALS } from '../../../test/gateway.js';
import { operationTable } from '../src/generated/api.js';
import {
  createClient,
  type GatewayClient,
  GatewayConnectionError,
  GatewayError,
  isGatewayError,
  type OperationName,
  verifyWebhook,
  WebhookVerificationError,
} from '../src/index.js';
import { type DroppingProxy, startDroppingProxy } from './dropping-proxy.js';

// The client against the real gateway app on a loopback port, with the real sandbox mock wholesaler.

const PHOENIX = 'phoenix';
const ORDER = { wholesaler: PHOENIX, items: [{ pzn: '04114918', quantity: 3 }] };

let database: TestDatabase;
let gw: Gateway;
let baseUrl: string;
let receiver: Receiver;

beforeAll(async () => {
  database = await createTestDatabase('sqlite');
  gw = await startGateway({ database, env: { ALLOW_PRIVATE_ENDPOINTS: 'true' } });
  gw.deps.webhooks.worker.start();
  baseUrl = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await gw?.deps.webhooks.close({ timeoutMs: 1_000 });
  await gw?.close();
  await receiver?.close();
  await database?.dispose();
});

/** A client that notes which operations were called, so the last test can check none was missed. */
const called = new Set<string>();
function recordingClient(options: Partial<Parameters<typeof createClient>[0]> = {}): GatewayClient {
  const client = createClient({
    baseUrl,
    apiKey: gw.keys.test.secret,
    credentials: TEST_CREDENTIALS,
    ...options,
  });
  return new Proxy(client, {
    get(target, name: string) {
      called.add(name);
      return target[name as OperationName];
    },
  });
}
const ordersPlaced = () => gw.mocks.sandbox.placedOrderCount({ tenant: gw.sandboxTenant(PHOENIX) });

describe('the client against a real gateway', () => {
  it('reads health, readiness and the wholesalers', async () => {
    const client = recordingClient();
    expect(await client.getHealth()).toMatchObject({ status: 'ok' });
    expect((await client.getReadiness()).status).toBe('ready');
    const { wholesalers } = await client.listWholesalers();
    expect(wholesalers.map((w) => w.id)).toContain(PHOENIX);
  });

  it('registers, tests and deletes a custom wholesaler', async () => {
    const client = recordingClient();
    const endpoint = gw.mocks.testServer.baseUrl({ tenant: 'custom/client-test', version: 2 });
    const custom = await client.registerCustomWholesaler({ body: { name: 'Client test', endpoint } });
    const { id } = custom.wholesaler;
    expect(id).toMatch(/^custom-client-test-/);
    expect((await client.testConnection({ body: { wholesaler: id } })).connected).toBe(true);
    await expect(client.deleteCustomWholesaler({ id })).resolves.toBeUndefined();
    await expect(client.deleteCustomWholesaler({ id })).rejects.toMatchObject({
      kind: 'wholesaler_not_found',
    });
  });

  it('checks availability and the contract', async () => {
    const client = recordingClient();
    const availability = await client.checkAvailability({
      body: { wholesaler: PHOENIX, items: [{ pzn: '04114918', quantity: 3 }] },
    });
    expect(availability.items[0]).toMatchObject({ pzn: '04114918', available: true });
    const bulk = await client.checkBulkAvailability({ body: { wholesaler: PHOENIX, pzns: ['04114918'] } });
    expect(bulk.available_pzns).toEqual(['04114918']);
    expect((await client.getContract({ wholesaler: PHOENIX })).wholesaler).toBe(PHOENIX);
  });

  it('compares availability at several wholesalers with a login for each', async () => {
    const client = recordingClient({
      wholesalerCredentials: {
        phoenix: TEST_CREDENTIALS,
        aep: { username: 'apotheke2', password: 'Apotheke-Süd: "7"' },
      },
    });
    const compared = await client.compareAvailability({
      body: { wholesalers: ['aep', PHOENIX], items: [{ pzn: '04114918', quantity: 3 }], deadline_ms: 4000 },
    });
    expect(compared.wholesalers.map((w) => [w.wholesaler, w.status])).toEqual([
      ['aep', 'ok'],
      [PHOENIX, 'ok'],
    ]);
    expect(compared.items[0]!.recommendation).toMatchObject({
      wholesaler: 'aep',
      units: 3,
      delivers_all: true,
    });
    await expect(
      client.compareAvailability(
        { body: { wholesalers: ['gehe'], items: [{ pzn: '04114918', quantity: 1 }] } },
        { retry: { retries: 0 } },
      ),
    ).rejects.toMatchObject({ kind: 'wholesaler_credentials_missing', status: 400 });
  });

  let delivery: { tracking_number: string; document_id: string | null; pzn: string };
  let webhook: { id: string; secret: string };

  it('subscribes to webhooks, then places an order and follows it to its delivery', async () => {
    const client = recordingClient();
    const created = await client.createWebhook({
      body: { url: receiver.url, wholesaler: PHOENIX, events: ['delivery.received', 'delivery.shortage'] },
    });
    webhook = { id: created.id, secret: created.signing_secret };

    const dryRun = await client.placeOrder({ dry_run: true, body: ORDER });
    expect(dryRun.status).toBe('dry_run');
    const before = ordersPlaced();
    const order = await client.placeOrder({ body: ORDER });
    expect(order.status).toBe('confirmed');
    expect(ordersPlaced()).toBe(before + 1);
    const status = await client.getOrderStatus({ order_id: order.order_id!, wholesaler: PHOENIX });
    expect(status.order_id).toBe(order.order_id);
    // The stored record and the listing need no MSV3 login.
    const record = await client.getOrder({ order_id: order.order_id! });
    expect(record.sub_orders[0]!.sub_order_id).toBe(order.sub_orders[0]!.sub_order_id);
    const listed = await client.listOrders({ wholesaler: PHOENIX, limit: 1 });
    expect(listed.orders.map((o) => o.order_id)).toEqual([order.order_id]);

    const { deliveries } = await client.listDeliveries({ wholesaler: PHOENIX });
    const last = deliveries.at(-1)!;
    delivery = {
      tracking_number: last.tracking_number,
      document_id: last.document_id,
      pzn: last.items[0]!.pzn,
    };
    const pdf = await client.downloadDocument({ id: delivery.document_id!, wholesaler: PHOENIX });
    expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe('%PDF-');
    const confirmed = await client.confirmDeliveries({
      body: { wholesaler: PHOENIX, tracking_numbers: [delivery.tracking_number] },
    });
    expect(confirmed.confirmed).toContain(delivery.tracking_number);
    const history = await client.deliveryHistory({
      wholesaler: PHOENIX,
      tracking_number: delivery.tracking_number,
    });
    expect(history.deliveries.map((d) => d.tracking_number)).toContain(delivery.tracking_number);
  });

  it('drives the sandbox with the test helpers: process, deliver, down and up', async () => {
    const client = recordingClient();
    const night = await client.placeOrder({
      // Not phoenix: the webhook tests below count phoenix's deliveries.
      body: { wholesaler: 'aep', items: [{ pzn: '09990139', quantity: 1 }] },
    });
    const processed = await client.processSandboxOrder({ order_id: night.order_id! });
    expect(processed.deliveries.length).toBeGreaterThan(0);
    const delivered = await client.deliverSandboxOrder({
      order_id: night.order_id!,
      body: { shortages: true },
    });
    expect(delivered.deliveries[0]).toMatchObject({ has_shortages: true });
    await client.takeSandboxWholesalerDown({ id: 'gehe' });
    await expect(
      client.checkAvailability(
        { body: { wholesaler: 'gehe', items: [{ pzn: '04114918', quantity: 1 }] } },
        { retry: { retries: 0 } },
      ),
    ).rejects.toBeInstanceOf(GatewayError);
    await client.bringSandboxWholesalerUp({ id: 'gehe' });
    const live = createClient({ baseUrl, apiKey: gw.keys.live.secret, credentials: TEST_CREDENTIALS });
    await expect(live.takeSandboxWholesalerDown({ id: PHOENIX })).rejects.toMatchObject({
      kind: 'test_mode_required',
      status: 403,
    });
  });

  it('enquires, announces and offers a return', async () => {
    const client = recordingClient();
    const item = {
      tracking_number: delivery.tracking_number,
      pzn: delivery.pzn,
      quantity: 1,
      reason: 'damaged' as const,
    };
    const enquiry = await client.enquireReturn({ body: { wholesaler: PHOENIX, items: [item] } });
    expect(enquiry.items).toHaveLength(1);
    const announced = await client.announceReturn({ body: { wholesaler: PHOENIX, items: [item] } });
    expect(announced.return_id).toEqual(expect.any(String));
    const offer = await client.requestTakeBackOffer({
      body: { wholesaler: PHOENIX, items: [{ pzn: delivery.pzn, quantity: 1 }] },
    });
    expect(offer.items).toHaveLength(1);
  });

  it('receives signed webhook deliveries that verifyWebhook accepts, across a secret rotation', async () => {
    const client = recordingClient();
    const [received] = await receiver.waitFor(1, 10_000);
    const event = await verifyWebhook(received!.body, received!.headers, webhook.secret);
    expect(event.type).toBe('delivery.received');
    await expect(verifyWebhook(received!.body, received!.headers, 'whsec_AAAA')).rejects.toMatchObject({
      code: 'signature_mismatch',
    });
    await expect(
      verifyWebhook(received!.body.replace('}', ' }'), received!.headers, webhook.secret),
    ).rejects.toBeInstanceOf(WebhookVerificationError);

    const { events } = await client.listEvents({ type: 'delivery.received' });
    expect(events.map((e) => e.id)).toContain(event.id);
    expect((await client.getEvent({ id: event.id })).id).toBe(event.id);

    const rotated = await client.rotateWebhookSecret({ id: webhook.id });
    await client.testWebhook({ id: webhook.id });
    const ping = (await receiver.waitFor(2, 10_000))[1]!;
    // During the rotation each delivery carries a signature for the new and for the old secret.
    const withNew = await verifyWebhook(ping.body, ping.headers, rotated.signing_secret, { scheme: 'both' });
    const withOld = await verifyWebhook(ping.body, ping.headers, webhook.secret, { scheme: 'both' });
    expect(withNew.type).toBe('ping');
    expect(withOld).toEqual(withNew);
    await expect(
      verifyWebhook(ping.body, ping.headers, ['whsec_AAAA', rotated.signing_secret]),
    ).resolves.toEqual(withNew);
  });

  it('manages the webhook subscription and its deliveries', async () => {
    const client = recordingClient();
    expect((await client.listWebhooks()).webhooks.map((w) => w.id)).toContain(webhook.id);
    expect((await client.getWebhook({ id: webhook.id })).id).toBe(webhook.id);
    expect((await client.updateWebhook({ id: webhook.id, body: { active: false } })).active).toBe(false);
    const { deliveries } = await client.listWebhookDeliveries({ id: webhook.id });
    const retried = await client.retryWebhookDelivery({ id: webhook.id, delivery_id: deliveries[0]!.id });
    expect(retried.delivery_id).toBe(deliveries[0]!.id);
    await client.deleteWebhook({ id: webhook.id });
    await expect(client.getWebhook({ id: webhook.id })).rejects.toMatchObject({ kind: 'webhook_not_found' });
  });

  it('throws typed errors with the request id', async () => {
    const client = recordingClient();
    const unknown = await client
      .checkAvailability({ body: { wholesaler: 'nope', items: ORDER.items } })
      .catch((e) => e);
    expect(isGatewayError(unknown, 'wholesaler_not_found')).toBe(true);
    expect(unknown).toMatchObject({
      status: 404,
      errorCode: expect.any(String),
      requestId: expect.any(String),
    });

    const invalid = await client
      .placeOrder({ body: { wholesaler: PHOENIX, items: [{ pzn: 'x', quantity: 1 }] } })
      .catch((e) => e);
    expect(invalid).toBeInstanceOf(GatewayError);
    expect(invalid).toMatchObject({ kind: 'invalid_request', status: 400, param: 'items[0].pzn' });

    const badKey = createClient({ baseUrl, apiKey: 'pk_test_nope' });
    await expect(badKey.listWholesalers()).rejects.toMatchObject({ kind: 'api_key_invalid', status: 401 });

    const key = `client-reused-${Date.now()}`;
    await client.placeOrder({ body: ORDER }, { idempotencyKey: key });
    const reused = await client
      .placeOrder({ body: { ...ORDER, items: [{ pzn: '04114918', quantity: 4 }] } }, { idempotencyKey: key })
      .catch((e) => e);
    expect(reused).toMatchObject({ kind: 'idempotency_key_reused', status: 422, idempotencyKey: key });
  });

  it('retries an order whose answer was lost with the same Idempotency-Key, placing it once', async () => {
    const proxy: DroppingProxy = await startDroppingProxy({
      host: '127.0.0.1',
      port: Number(new URL(baseUrl).port),
    });
    try {
      const keys: (string | null)[] = [];
      const client = recordingClient({
        baseUrl: proxy.url,
        retry: { baseDelayMs: 10 },
        fetch: (url, init) => {
          keys.push(new Headers(init?.headers).get('idempotency-key'));
          return fetch(url, init);
        },
      });
      const before = ordersPlaced();
      proxy.dropNextAnswer();
      const order = await client.placeOrder({ body: ORDER });
      expect(proxy.dropped).toBe(1);
      expect(keys).toHaveLength(2);
      expect(keys[0]).toEqual(expect.any(String));
      expect(keys[1]).toBe(keys[0]);
      expect(ordersPlaced()).toBe(before + 1);
      const again = await client.placeOrder({ body: ORDER }, { idempotencyKey: keys[0]! });
      expect(again.order_id).toBe(order.order_id);
      expect(ordersPlaced()).toBe(before + 1);
    } finally {
      await proxy.close();
    }
  });

  it('gives up after its retries with the key to retry later, and never repeats a keyless POST', async () => {
    const proxy = await startDroppingProxy({ host: '127.0.0.1', port: Number(new URL(baseUrl).port) });
    try {
      const client = createClient({
        baseUrl: proxy.url,
        apiKey: gw.keys.test.secret,
        credentials: TEST_CREDENTIALS,
      });
      proxy.dropNextAnswer();
      const lost = await client.placeOrder({ body: ORDER }, { retry: { retries: 0 } }).catch((e) => e);
      expect(lost).toBeInstanceOf(GatewayConnectionError);
      expect(lost.idempotencyKey).toEqual(expect.any(String));
      const before = ordersPlaced();
      const order = await client.placeOrder({ body: ORDER }, { idempotencyKey: lost.idempotencyKey });
      expect(order.status).toBe('confirmed');
      expect(ordersPlaced()).toBe(before);

      proxy.dropNextAnswer();
      const availability = await client.checkAvailability({ body: ORDER }).catch((e) => e);
      expect(availability).toMatchObject({ name: 'GatewayConnectionError', attempts: 1 });
    } finally {
      await proxy.close();
    }
  });

  it('splits an order over two wholesalers, logins in X-MSV3-Credentials', async () => {
    const client = recordingClient({
      wholesalerCredentials: {
        aep: TEST_CREDENTIALS,
        phoenix: { username: 'apotheke1', password: 'Süd:Passwort' },
      },
    });
    // aep has the plain article; only phoenix has some (3) of 09990323 (docs/sandbox.md).
    const body = {
      wholesalers: ['aep', PHOENIX],
      items: [
        { pzn: '04114918', quantity: 2 },
        { pzn: '09990323', quantity: 5 },
      ],
    };
    const plan = await client.splitOrder({ dry_run: true, body });
    expect(plan.status).toBe('dry_run');
    const placed = await client.splitOrder({ body }, { idempotencyKey: `client-split-${Date.now()}` });
    expect(placed.status).toBe('complete');
    expect(placed.orders.map((o) => [o.wholesaler, o.status])).toEqual([
      ['aep', 'confirmed'],
      [PHOENIX, 'confirmed'],
    ]);
    expect(placed.lines[1]).toMatchObject({ quantity_planned: 3, quantity_undeliverable: 2 });
    expect((await client.getOrder({ order_id: placed.orders[1]!.order_id! })).wholesaler).toBe(PHOENIX);
  });

  it('has called every operation of the OpenAPI document', () => {
    expect([...called].filter((name) => name in operationTable).sort()).toEqual(
      Object.keys(operationTable).sort(),
    );
  });
});

describe('the client and Retry-After', () => {
  let limited: Gateway;
  let limitedDatabase: TestDatabase;
  beforeAll(async () => {
    limitedDatabase = await createTestDatabase('sqlite');
    limited = await startGateway({
      database: limitedDatabase,
      env: { RATE_LIMIT_TEST_POINTS: '1', RATE_LIMIT_TEST_WINDOW_SECONDS: '1' },
    });
  });
  afterAll(async () => {
    await limited?.close();
    await limitedDatabase?.dispose();
  });

  it('waits as 429 rate_limited says and then succeeds', async () => {
    const url = await limited.app.listen({ host: '127.0.0.1', port: 0 });
    const statuses: number[] = [];
    const client = createClient({
      baseUrl: url,
      apiKey: limited.keys.test.secret,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        statuses.push(response.status);
        return response;
      },
    });
    await client.listWholesalers();
    const started = Date.now();
    await client.listWholesalers();
    expect(statuses).toEqual([200, 429, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const impatient = await client.listWholesalers({}, { retry: { retries: 0 } }).catch((e) => e);
    expect(impatient).toMatchObject({
      kind: 'rate_limited',
      status: 429,
      retryAfterSeconds: expect.any(Number),
    });
  });
});
