import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type MockWholesaler, SCENARIO_PZNS, startMockWholesaler } from '../src/mock/index.js';
import { parseCatalogue } from '../src/wholesalers/catalogue.js';
import { describeEachDialect, type TestDatabase } from './db.js';
import { type Gateway, startGateway } from './gateway.js';

/**
 * Two gateway instances, each with its own connection pool on one database, in front of one wholesaler:
 * identical orders with one Idempotency-Key, sent to both at once, place exactly one order.
 */
describeEachDialect('one Idempotency-Key across two gateway instances', (getDatabase) => {
  const TENANT = 'shared/phoenix';
  let wholesaler: MockWholesaler;
  let first: Gateway;
  let second: Gateway;

  beforeAll(async () => {
    wholesaler = await startMockWholesaler({ slowAnswerMs: 600 });
    const catalogue = () =>
      parseCatalogue({
        wholesalers: [
          {
            id: 'phoenix',
            name: 'PHOENIX',
            version: 2,
            test: { baseUrl: wholesaler.baseUrl({ tenant: TENANT, version: 2 }) },
          },
        ],
      });
    first = await startGateway({ database: getDatabase(), catalogue });
    const ownPool = await getDatabase().openAnother();
    const secondDatabase: TestDatabase = {
      ...getDatabase(),
      db: ownPool.db,
      pgPool: ownPool.pgPool,
      close: ownPool.close,
    };
    second = await startGateway({ database: secondDatabase, catalogue });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await wholesaler?.close();
  });

  it('places exactly one order; the duplicates get 409 or the replay', async () => {
    const key = randomUUID();
    const body = { wholesaler: 'phoenix_test', items: [{ pzn: SCENARIO_PZNS.SLOW_ANSWER.pzn, quantity: 1 }] };
    const send = (gateway: Gateway) =>
      gateway.inject({
        method: 'POST',
        url: '/v1/orders',
        body,
        key: first.keys.test.secret,
        headers: { 'idempotency-key': key },
      });

    const responses = await Promise.all([first, second, first, second, first, second].map(send));
    const executed = responses.filter(
      (r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined,
    );
    expect(executed).toHaveLength(1);
    for (const response of responses) {
      if (response === executed[0]) continue;
      if (response.statusCode === 409) expect(response.json().error).toBe('idempotency_request_in_progress');
      else expect(response.body).toBe(executed[0]!.body);
    }
    expect(wholesaler.requestCount('bestellen')).toBe(1);
    expect(wholesaler.placedOrderCount({ tenant: TENANT })).toBe(1);

    const later = await send(second);
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body).toBe(executed[0]!.body);
  });
});
