import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import { SCENARIO_PZNS } from '../../mock/index.js';
import { parseCatalogue } from '../../wholesalers/catalogue.js';

/**
 * POST /v1/orders/split against the built-in sandbox, which plays four wholesalers whose stock differs
 * for the scenario PZNs (docs/sandbox.md "Scenario PZNs"): the plan, one order per wholesaler, the
 * remainder split, undeliverable lines, a wholesaler that is down, the dry run, and the replay.
 */

const PLAIN = '04114918';
const ALLIANCE_ONLY = SCENARIO_PZNS.ONLY_AT_ALLIANCE.pzn;
const SANACORP_ONLY = SCENARIO_PZNS.ONLY_AT_SANACORP.pzn;
const SHORT = SCENARIO_PZNS.SHORT_EVERYWHERE.pzn;
const NOWEDA_DOWN = SCENARIO_PZNS.DOWN_AT_NOWEDA.pzn;
const THREE = ['phoenix', 'alliance', 'sanacorp'];

describeEachDialect('split orders', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({
      database: getDatabase(),
      catalogue: () =>
        parseCatalogue({
          wholesalers: ['phoenix', 'alliance', 'sanacorp', 'noweda'].map((id) => ({
            id,
            name: id,
            version: 2,
          })),
        }),
    });
  });
  afterAll(() => gw.close());

  /** A pharmacy with its own login at each wholesaler. */
  const pharmacy = () => {
    const user = `apo${randomUUID().slice(0, 8)}`;
    return {
      user,
      header: ['phoenix', 'alliance', 'sanacorp', 'noweda']
        .map((w) => `${w}=("${user}${w.slice(0, 2)}" "pw-${w}")`)
        .join(', '),
    };
  };
  const split = (
    body: unknown,
    login: { header: string },
    options: { key?: string | null; dryRun?: boolean } = {},
  ) =>
    gw.inject({
      method: 'POST',
      url: `/v1/orders/split${options.dryRun ? '?dry_run=true' : ''}`,
      body,
      credentials: null,
      headers: {
        'x-msv3-credentials': login.header,
        ...(options.key === null ? {} : { 'idempotency-key': options.key ?? randomUUID() }),
      },
    });
  const held = (wholesaler: string, login: { user: string }) =>
    gw.mocks.sandbox.orders(gw.sandboxTenant(wholesaler), `${login.user}${wholesaler.slice(0, 2)}`);
  const calls = (operation: string) => gw.mocks.sandbox.requestCount(operation);

  const ACROSS_THREE = {
    wholesalers: THREE,
    items: [
      { pzn: PLAIN, quantity: 2 },
      { pzn: ALLIANCE_ONLY, quantity: 1 },
      { pzn: SANACORP_ONLY, quantity: 1 },
    ],
  };

  it('places one order at each of three wholesalers, each with the lines it has', async () => {
    const login = pharmacy();
    const response = await split(ACROSS_THREE, login);
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json();
    expect(result).toMatchObject({
      status: 'complete',
      dry_run: false,
      split_id: expect.stringMatching(/^SP-/),
    });
    expect(
      result.orders.map((o: { wholesaler: string; status: string }) => [o.wholesaler, o.status]),
    ).toEqual([
      ['phoenix', 'confirmed'],
      ['alliance', 'confirmed'],
      ['sanacorp', 'confirmed'],
    ]);
    expect(result.orders.map((o: { items: unknown[] }) => o.items)).toEqual([
      [{ pzn: PLAIN, quantity: 2, quantity_confirmed: 2 }],
      [{ pzn: ALLIANCE_ONLY, quantity: 1, quantity_confirmed: 1 }],
      [{ pzn: SANACORP_ONLY, quantity: 1, quantity_confirmed: 1 }],
    ]);
    for (const [i, wholesaler] of THREE.entries()) {
      const orders = held(wholesaler, login);
      expect(orders.map((o) => o.id)).toEqual([result.orders[i].request_id]);
      // The order endpoints show it, with the wholesaler and lines of the plan.
      const record = await gw.inject({ url: `/v1/orders/${result.orders[i].order_id}` });
      expect(record.statusCode, record.body).toBe(200);
      expect(record.json()).toMatchObject({ wholesaler, order_id: result.orders[i].order_id });
    }
    expect(result.lines.map((l: { allocations: unknown[] }) => l.allocations)).toEqual([
      [
        {
          wholesaler: 'phoenix',
          quantity: 2,
          order_id: result.orders[0].order_id,
          status: 'confirmed',
          quantity_confirmed: 2,
        },
      ],
      [
        {
          wholesaler: 'alliance',
          quantity: 1,
          order_id: result.orders[1].order_id,
          status: 'confirmed',
          quantity_confirmed: 1,
        },
      ],
      [
        {
          wholesaler: 'sanacorp',
          quantity: 1,
          order_id: result.orders[2].order_id,
          status: 'confirmed',
          quantity_confirmed: 1,
        },
      ],
    ]);
  });

  it('splits a line no wholesaler has in full, and reports what nobody delivers', async () => {
    const login = pharmacy();
    const response = await split(
      {
        wholesalers: THREE,
        items: [
          { pzn: SHORT, quantity: 15 },
          { pzn: PLAIN, quantity: 1 },
        ],
      },
      login,
    );
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json();
    expect(result.lines[0]).toMatchObject({
      pzn: SHORT,
      quantity: 15,
      quantity_planned: 12,
      quantity_undeliverable: 3,
      undeliverable_reason: 'not_available',
    });
    expect(
      result.lines[0].allocations.map((a: { wholesaler: string; quantity: number }) => [
        a.wholesaler,
        a.quantity,
      ]),
    ).toEqual([
      ['phoenix', 3],
      ['alliance', 4],
      ['sanacorp', 5],
    ]);
    expect(result.lines[1]).toMatchObject({ quantity_undeliverable: 0, undeliverable_reason: null });
    expect(held('phoenix', login)[0]!.subOrders![0]!.positions.map((p) => [p.pzn, p.quantity])).toEqual([
      [SHORT, 3],
      [PLAIN, 1],
    ]);
    expect(held('sanacorp', login)[0]!.subOrders![0]!.positions.map((p) => [p.pzn, p.quantity])).toEqual([
      [SHORT, 5],
    ]);
  });

  it('takes 3 + 4 + 3 of ten units short everywhere, never more than requested', async () => {
    const login = pharmacy();
    const response = await split({ wholesalers: THREE, items: [{ pzn: SHORT, quantity: 10 }] }, login);
    const result = response.json();
    expect(result.lines[0].allocations.map((a: { quantity: number }) => a.quantity)).toEqual([3, 4, 3]);
    expect(result.lines[0]).toMatchObject({ quantity_planned: 10, quantity_undeliverable: 0 });
  });

  it('gives a wholesaler that is down no lines and names its error; the others take the order', async () => {
    const login = pharmacy();
    const response = await split(
      {
        wholesalers: ['noweda', 'phoenix'],
        items: [
          { pzn: NOWEDA_DOWN, quantity: 1 },
          { pzn: PLAIN, quantity: 1 },
        ],
      },
      login,
    );
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json();
    expect(result.status).toBe('complete');
    expect(result.wholesalers[0]).toMatchObject({
      wholesaler: 'noweda',
      error: { error: expect.any(String) },
    });
    expect(result.wholesalers[1]).toEqual({ wholesaler: 'phoenix', error: null });
    expect(result.orders.map((o: { wholesaler: string }) => o.wholesaler)).toEqual(['phoenix']);
    expect(held('noweda', login)).toEqual([]);
  });

  it('reports a line nobody delivers, with a wholesaler down as the reason', async () => {
    const login = pharmacy();
    const response = await split(
      {
        wholesalers: ['noweda', 'phoenix'],
        items: [
          { pzn: NOWEDA_DOWN, quantity: 1 },
          { pzn: ALLIANCE_ONLY, quantity: 2 },
        ],
      },
      login,
    );
    const result = response.json();
    expect(result.lines[1]).toMatchObject({
      allocations: [],
      quantity_undeliverable: 2,
      undeliverable_reason: 'wholesaler_unavailable',
    });
  });

  it('dry run: the plan without ids, nothing placed, nothing stored, no key needed', async () => {
    const login = pharmacy();
    const before = calls('bestellen');
    const response = await split(ACROSS_THREE, login, { dryRun: true, key: null });
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json();
    expect(result).toMatchObject({ status: 'dry_run', dry_run: true, split_id: null });
    expect(
      result.orders.map((o: { wholesaler: string; status: string; order_id: null }) => [
        o.wholesaler,
        o.status,
        o.order_id,
      ]),
    ).toEqual([
      ['phoenix', 'planned', null],
      ['alliance', 'planned', null],
      ['sanacorp', 'planned', null],
    ]);
    expect(calls('bestellen')).toBe(before);
    const stored = await gw.database.db.selectFrom('order_splits').select('id').execute();
    const placed = await split(ACROSS_THREE, login);
    expect(placed.json().status).toBe('complete');
    expect((await gw.database.db.selectFrom('order_splits').select('id').execute()).length).toBe(
      stored.length + 1,
    );
  });

  it('refuses to place without an Idempotency-Key, before asking anyone', async () => {
    const before = calls('verfuegbarkeitAnfragen');
    const response = await split(ACROSS_THREE, pharmacy(), { key: null });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_idempotency_key', param: 'Idempotency-Key' });
    expect(calls('verfuegbarkeitAnfragen')).toBe(before);
  });

  it('replays a finished split with the same key without calling any wholesaler', async () => {
    const login = pharmacy();
    const key = randomUUID();
    const first = await split(ACROSS_THREE, login, { key });
    const sent = { bestellen: calls('bestellen'), asked: calls('verfuegbarkeitAnfragen') };
    const again = await split(ACROSS_THREE, login, { key });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect({ bestellen: calls('bestellen'), asked: calls('verfuegbarkeitAnfragen') }).toEqual(sent);
    for (const wholesaler of THREE) expect(held(wholesaler, login)).toHaveLength(1);
  });

  it('refuses the same key with other logins, and names a wholesaler without a login', async () => {
    const login = pharmacy();
    const key = randomUUID();
    await split(ACROSS_THREE, login, { key });
    const other = await split(ACROSS_THREE, pharmacy(), { key });
    expect(other.statusCode).toBe(422);
    expect(other.json().error).toBe('idempotency_key_reused');
    const missing = await split(ACROSS_THREE, { header: 'phoenix=("apo1" "pw"), alliance=("apo1" "pw")' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'wholesaler_credentials_missing', wholesaler: 'sanacorp' });
    expect(missing.body).not.toContain('"pw"');
  });

  it('refuses repeated PZNs and wholesalers, naming the field', async () => {
    const login = pharmacy();
    const pzn = await split(
      {
        wholesalers: THREE,
        items: [
          { pzn: PLAIN, quantity: 1 },
          { pzn: '4114918', quantity: 1 },
        ],
      },
      login,
    );
    expect(pzn.json()).toMatchObject({ error: 'invalid_request', param: 'items[1].pzn' });
    const wholesaler = await split(
      { wholesalers: ['phoenix', 'Phoenix'], items: [{ pzn: PLAIN, quantity: 1 }] },
      login,
    );
    expect(wholesaler.json()).toMatchObject({ error: 'invalid_request', param: 'wholesalers[1]' });
  });
});
