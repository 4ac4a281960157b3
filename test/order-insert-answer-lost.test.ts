import { randomUUID } from 'node:crypto';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, type TestDatabase } from './db.js';
import { type Gateway, startGateway } from './gateway.js';

/**
 * The order's row is written (state `sending`) and then the database connection is lost before the
 * gateway hears that the insert committed, as when PostgreSQL's connections are terminated under traffic
 * (the battery's "db loss: rows left sending"). The client gets 503; its retry with the same
 * Idempotency-Key must resume that row (same order id and Bestellung Id: nothing was sent yet, so the
 * wholesaler is asked and then given the order once), not place a new order beside a row left `sending`
 * for ever. Without a key nobody can ask for the order again, so the gateway removes the unsent row.
 */

/** Lets the next insert into `orders` commit, then throws what a terminated connection throws. */
function loseAnswerOfNextOrderInsert(): KyselyPlugin & { armed: boolean } {
  const inserts = new WeakSet<object>();
  return {
    armed: false,
    transformQuery(args: PluginTransformQueryArgs) {
      const node = args.node;
      if (node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === 'orders')
        inserts.add(args.queryId);
      return node;
    },
    async transformResult(args: PluginTransformResultArgs) {
      if (this.armed && inserts.has(args.queryId)) {
        this.armed = false;
        throw Object.assign(new Error('terminating connection due to administrator command'), {
          code: '57P01',
        });
      }
      return args.result;
    },
  };
}

describeEachDialect('an order whose insert committed but whose answer was lost', (getDatabase) => {
  const plugin = loseAnswerOfNextOrderInsert();
  let gw: Gateway;
  let database: TestDatabase;

  beforeAll(async () => {
    const shared = getDatabase();
    database = { ...shared, db: shared.db.withPlugin(plugin) };
    gw = await startGateway({ database });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers 503, and the retry with the key resumes the stored row instead of ordering beside it', async () => {
    const credentials = { username: `lostinsert${randomUUID().slice(0, 8)}`, password: 'pw-for-tests' };
    const request = {
      url: '/v1/orders',
      body: { wholesaler: 'phoenix_test', items: [{ pzn: '4114918', quantity: 2 }] },
      credentials,
      headers: { 'idempotency-key': randomUUID() },
    };
    plugin.armed = true;
    const first = await gw.inject(request);
    expect(first.statusCode, first.body).toBe(503);
    expect(first.json().error).toBe('service_unavailable');
    expect(first.headers['retry-after']).toBeDefined();
    const rows = () =>
      database.db
        .selectFrom('orders')
        .select(['id', 'bestellung_id', 'state'])
        .where('customer_id', '=', credentials.username)
        .execute();
    const [orphan, ...others] = await rows();
    expect(others).toEqual([]);
    expect(orphan?.state).toBe('sending');

    const retry = await gw.inject(request);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({
      order_id: orphan!.id,
      request_id: orphan!.bestellung_id,
      status: 'confirmed',
    });
    expect(await rows()).toEqual([{ ...orphan, state: 'confirmed' }]);
    const atWholesaler = gw.mocks.testServer.orders('test/phoenix', credentials.username);
    expect(atWholesaler.map((order) => order.id)).toEqual([orphan!.bestellung_id]);
  });

  it('answers 503 without a key, and leaves no row behind that nobody could ask about', async () => {
    const credentials = { username: `lostinsert${randomUUID().slice(0, 8)}`, password: 'pw-for-tests' };
    plugin.armed = true;
    const first = await gw.inject({
      url: '/v1/orders',
      body: { wholesaler: 'phoenix_test', items: [{ pzn: '4114918', quantity: 2 }] },
      credentials,
    });
    expect(first.statusCode, first.body).toBe(503);
    const left = await database.db
      .selectFrom('orders')
      .select(['id', 'state'])
      .where('customer_id', '=', credentials.username)
      .execute();
    expect(left).toEqual([]);
    expect(gw.mocks.testServer.orders('test/phoenix', credentials.username)).toEqual([]);
  });
});
