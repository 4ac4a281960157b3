import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../src/observability/logger.js';
import { type Receiver, startReceiver } from '../src/webhooks/test-support/receiver.js';
import { describeEachDialect, type TestDatabase } from './db.js';
import { type Gateway, startGateway } from './gateway.js';

/**
 * The whole pharmacy flow through the gateway with a distinctive MSV3 password: order, delivery notices,
 * confirmation, history, a return enquiry and announcement, a take-back offer, two PDF downloads, and a
 * refused login; then a webhook subscription, connection test, availability, bulk availability,
 * contracts, an order dry run, an order and its status, a custom wholesaler registered and verified by a
 * connection test to its own endpoint, refused logins (the mock's always-rejected `wrong-password` at the
 * custom wholesaler, for a connection test and an order, and a wrong password at the sandbox), and the
 * webhook deliveries sent; split orders whose logins travel in X-MSV3-Credentials (a pair of strings and a
 * byte sequence of user:password), with a refused login among them. Afterwards neither the database (SQLite files including -wal and -shm, or
 * every table of the PostgreSQL schema), the captured logs nor the webhook requests contain any of the
 * passwords or the Basic-auth tokens built from them.
 */

const USERNAME = 'flowpharmacy1';
const PASSWORD = 'Zq7#Flow-Secret!x9Kp';
const WRONG_PASSWORD = 'Wr0ng-Flow#Guess!Vb4';
/** The mock's documented always-rejected password (docs/sandbox.md, "Logins"): 401 in sandbox mode. */
const REJECTED_PASSWORD = 'wrong-password';

const basicToken = (password: string) => Buffer.from(`${USERNAME}:${password}`).toString('base64');
const SECRETS = [
  PASSWORD,
  WRONG_PASSWORD,
  REJECTED_PASSWORD,
  basicToken(PASSWORD),
  basicToken(WRONG_PASSWORD),
  basicToken(REJECTED_PASSWORD),
];

describeEachDialect('whole flow keeps the MSV3 password out of storage and logs', (getDatabase, dialect) => {
  let gw: Gateway;
  let receiver: Receiver;
  const logLines: string[] = [];
  const credentials = { username: USERNAME, password: PASSWORD };

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    gw = await startGateway({
      database: getDatabase(),
      logger: createLogger({ level: 'trace', destination }),
      // The sandbox accepts exactly these credentials, so the password really travels and is checked.
      // The test server mock (a custom wholesaler's endpoint below) runs in sandbox mode.
      mockOptions: { sandbox: { credentials } },
      // Loopback endpoints for the custom wholesaler and the webhook receiver; the worker is drained by hand.
      env: { ALLOW_PRIVATE_ENDPOINTS: 'true', WEBHOOK_POLL_INTERVAL_MS: '600000' },
    });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await gw.deps.webhooks.close({ timeoutMs: 1_000 });
    await gw.close();
    await receiver?.close();
  });

  it('runs order → deliveries → confirm → history → returns → offer → documents', async () => {
    const ok = async (request: Parameters<Gateway['inject']>[0]) => {
      const response = await gw.inject({ credentials, ...request });
      expect(response.statusCode, `${request.url}: ${response.body}`).toBe(200);
      return response;
    };

    await ok({
      url: '/v1/orders',
      body: {
        wholesaler: 'phoenix',
        items: [
          { pzn: '4114918', quantity: 3 },
          { pzn: '9990122', quantity: 2 },
        ],
      },
      headers: { 'idempotency-key': 'flow-order-1' },
    });
    const [notice] = (await ok({ url: '/v1/deliveries', query: { wholesaler: 'phoenix' } })).json()
      .deliveries;
    expect(notice.has_shortages).toBe(true);
    await ok({
      url: '/v1/deliveries/confirm',
      body: { wholesaler: 'phoenix', tracking_numbers: [notice.tracking_number] },
      headers: { 'idempotency-key': 'flow-confirm-1' },
    });
    expect((await ok({ url: '/v1/deliveries', query: { wholesaler: 'phoenix' } })).json().deliveries).toEqual(
      [],
    );
    const history = (await ok({ url: '/v1/deliveries/history', query: { wholesaler: 'phoenix' } })).json();
    expect(history.deliveries[0]).toMatchObject({
      tracking_number: notice.tracking_number,
      confirmed_at: expect.any(String),
    });
    await ok({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix', barcode: notice.barcode },
    });

    const items = [
      { tracking_number: notice.tracking_number, pzn: '4114918', quantity: 1, reason: 'damaged' },
    ];
    const enquiry = (await ok({ url: '/v1/returns', body: { wholesaler: 'phoenix', items } })).json();
    expect(enquiry.items[0].accepted).toBe(true);
    const announcement = (
      await ok({
        url: '/v1/returns/announce',
        body: { wholesaler: 'phoenix', items, company: { iban: 'DE02120300000000202051' } },
        headers: { 'idempotency-key': 'flow-announce-1' },
      })
    ).json();
    const slipId = announcement.portions[0].document_id;
    expect(slipId).toEqual(expect.any(String));
    await ok({
      url: '/v1/returns/offers',
      body: { wholesaler: 'phoenix', items: [{ pzn: '4114918', quantity: 2 }] },
    });

    for (const id of [notice.document_id, slipId]) {
      const pdf = await ok({ url: `/v1/documents/${id}`, query: { wholesaler: 'phoenix' } });
      expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    }

    const refused = await gw.inject({
      url: '/v1/deliveries/history',
      query: { wholesaler: 'phoenix' },
      credentials: { username: USERNAME, password: WRONG_PASSWORD },
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.body).not.toContain('tracking_number');
  });

  it('runs webhooks → connection test → availability → bulk → contracts → dry run → order → status → custom wholesaler → refused logins', async () => {
    const ok = async (request: Parameters<Gateway['inject']>[0], status = 200) => {
      const response = await gw.inject({ credentials, ...request });
      expect(response.statusCode, `${request.url}: ${response.body}`).toBe(status);
      return response;
    };

    const subscription = await ok(
      {
        url: '/v1/webhooks',
        credentials: null,
        body: {
          url: receiver.url,
          wholesaler: 'phoenix',
          events: ['delivery.received', 'delivery.shortage', 'order.status_changed'],
        },
      },
      201,
    );
    expect(subscription.json().signing_secret).toEqual(expect.any(String));

    expect((await ok({ url: '/v1/connection/test', body: { wholesaler: 'phoenix' } })).json().connected).toBe(
      true,
    );
    await ok({
      url: '/v1/availability',
      body: {
        wholesaler: 'phoenix',
        items: [
          { pzn: '4114918', quantity: 2 },
          { pzn: '9990122', quantity: 1 },
        ],
      },
    });
    await ok({ url: '/v1/availability/bulk', body: { wholesaler: 'phoenix', pzns: ['4114918', '9990122'] } });
    expect((await ok({ url: '/v1/contracts', query: { wholesaler: 'phoenix' } })).json().customer_id).toBe(
      USERNAME,
    );
    const order = { wholesaler: 'phoenix', items: [{ pzn: '9990122', quantity: 4 }] };
    const dryRun = await ok({ url: '/v1/orders', query: { dry_run: 'true' }, body: order });
    expect(dryRun.json().status).toBe('dry_run');
    const placed = (
      await ok({ url: '/v1/orders', body: order, headers: { 'idempotency-key': 'flow-order-2' } })
    ).json();
    expect(placed.order_id).toMatch(/^GW-/);
    await ok({ url: `/v1/orders/${placed.order_id}/status`, query: { wholesaler: 'phoenix' } });
    // The notice of this order, read after the subscription exists: delivery events into the outbox.
    const [notice] = (await ok({ url: '/v1/deliveries', query: { wholesaler: 'phoenix' } })).json()
      .deliveries;
    expect(notice.has_shortages).toBe(true);

    const endpoint = gw.mocks.testServer.baseUrl({ tenant: 'custom/flow', version: 2 });
    const custom = (
      await ok(
        {
          url: '/v1/wholesalers/custom',
          credentials: null,
          body: { name: 'Flow Hausgrosshandel', endpoint },
          headers: { 'idempotency-key': 'flow-custom-1' },
        },
        200,
      )
    ).json().wholesaler;
    // A test key reaches a custom wholesaler's own endpoint as `<id>_test`.
    const reachedBefore = gw.mocks.testServer.requestCount('verbindungTesten');
    const connected = await ok({ url: '/v1/connection/test', body: { wholesaler: `${custom.id}_test` } });
    expect(connected.json().connected).toBe(true);
    expect(gw.mocks.testServer.requestCount('verbindungTesten')).toBe(reachedBefore + 1);
    const listed = (await ok({ url: '/v1/wholesalers', credentials: null })).json().wholesalers;
    expect(listed).toContainEqual(expect.objectContaining({ id: custom.id, verified: true }));

    // Refused logins: the scenario password at the custom wholesaler (connection test, and an order, which is
    // stored before it is sent), and a wrong password at the sandbox, which accepts only PASSWORD.
    const rejected = { username: USERNAME, password: REJECTED_PASSWORD };
    const refusedConnection = await ok(
      { url: '/v1/connection/test', body: { wholesaler: `${custom.id}_test` }, credentials: rejected },
      401,
    );
    expect(refusedConnection.json().error).toBe('wholesaler_credentials_rejected');
    const refusedOrder = await ok(
      {
        url: '/v1/orders',
        body: { ...order, wholesaler: `${custom.id}_test` },
        credentials: rejected,
        headers: { 'idempotency-key': 'flow-order-refused' },
      },
      401,
    );
    expect(refusedOrder.json().error).toBe('wholesaler_credentials_rejected');
    const refusedAvailability = await ok(
      {
        url: '/v1/availability',
        body: { wholesaler: 'phoenix', items: [{ pzn: '4114918', quantity: 1 }] },
        credentials: { username: USERNAME, password: WRONG_PASSWORD },
      },
      401,
    );
    expect(refusedAvailability.json().error).toBe('wholesaler_credentials_rejected');

    // The outbox's deliveries, sent and logged: none of them carries a password either.
    expect(await gw.deps.webhooks.worker.drain()).toBeGreaterThanOrEqual(2);
    const events = receiver.requests.map((r) => JSON.parse(r.body).type);
    expect(events).toEqual(expect.arrayContaining(['delivery.received', 'delivery.shortage']));
    const payloads = receiver.requests.map((r) => JSON.stringify(r.headers) + r.body).join('\n');
    expect(payloads).toContain(notice.tracking_number);
    for (const secret of SECRETS) expect(payloads.includes(secret), `webhook contains ${secret}`).toBe(false);
  });

  it('splits an order over two wholesalers with X-MSV3-Credentials (strings and byte sequence)', async () => {
    const split = (header: string, query = '') =>
      gw.inject({
        url: `/v1/orders/split${query}`,
        credentials: null,
        headers: { 'x-msv3-credentials': header, 'idempotency-key': `flow-split-${header.length}${query}` },
        body: {
          // aep has the plain article; only phoenix has some of 09990323 (docs/sandbox.md).
          wholesalers: ['aep', 'phoenix'],
          items: [
            { pzn: '4114918', quantity: 2 },
            { pzn: '9990323', quantity: 5 },
          ],
        },
      });
    const both = `phoenix=("${USERNAME}" "${PASSWORD}"), aep=:${basicToken(PASSWORD)}:`;
    const dryRun = await split(both, '?dry_run=true');
    expect(dryRun.statusCode, dryRun.body).toBe(200);
    const placed = await split(both);
    expect(placed.statusCode, placed.body).toBe(200);
    expect(
      placed.json().orders.map((o: { wholesaler: string; status: string }) => [o.wholesaler, o.status]),
    ).toEqual([
      ['aep', 'confirmed'],
      ['phoenix', 'confirmed'],
    ]);
    // A wrong password at one wholesaler: it gets no lines; the other takes what it has.
    const refused = await split(
      `phoenix=("${USERNAME}" "${PASSWORD}"), aep=("${USERNAME}" "${WRONG_PASSWORD}")`,
    );
    expect(refused.statusCode, refused.body).toBe(200);
    expect(refused.json().wholesalers[0].error.error).toBe('wholesaler_credentials_rejected');
    for (const response of [dryRun, placed, refused])
      for (const secret of SECRETS)
        expect(response.body.includes(secret), `answer contains ${secret}`).toBe(false);
  });

  it('left no password in the database', async () => {
    const stored = await storedText(gw.database, dialect);
    // Proof that the search looks at real data: the notices and the order are there.
    expect(stored).toContain('LS');
    expect(stored).toContain('delivery.received');
    expect(stored).toContain('custom-flow-hausgrosshandel-');
    expect(stored).toContain('flowpharmacy1');
    for (const secret of SECRETS) expect(stored.includes(secret), `database contains ${secret}`).toBe(false);
  });

  it('left no password in the logs', () => {
    const logs = logLines.join('');
    expect(logs).toContain('/v1/returns/announce');
    expect(logs).toContain('/v1/wholesalers/custom');
    for (const secret of SECRETS) expect(logs.includes(secret), `logs contain ${secret}`).toBe(false);
  });
});

/** SQLite: the bytes of every file of the database (main, -wal, -shm). PostgreSQL: every row of the schema. */
async function storedText(database: TestDatabase, dialect: string): Promise<string> {
  if (dialect === 'sqlite') {
    const file = database.url.slice('sqlite:'.length);
    const folder = dirname(file);
    const files = readdirSync(folder).map((name) => join(folder, name));
    expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
    return files.map((f) => readFileSync(f).toString('latin1')).join('\n');
  }
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = ${database.schema!}`.execute(
    database.db,
  );
  let text = '';
  for (const { table_name } of tables.rows) {
    const rows = await sql`select * from ${sql.table(table_name)}`.execute(database.db);
    text += `${table_name}\n${JSON.stringify(rows.rows)}\n`;
  }
  expect(tables.rows.map((t) => t.table_name)).toEqual(
    expect.arrayContaining(['delivery_notices', 'idempotency_keys']),
  );
  return text;
}
