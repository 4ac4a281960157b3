import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../src/observability/logger.js';
import { describeEachDialect, type TestDatabase } from './db.js';
import { type Gateway, startGateway } from './gateway.js';

/**
 * The whole pharmacy flow through the gateway with a distinctive MSV3 password: order, delivery notices,
 * confirmation, history, a return enquiry and announcement, a take-back offer, two PDF downloads, and a
 * refused login. Afterwards neither the database (SQLite files including -wal and -shm, or every table
 * of the PostgreSQL schema) nor the captured logs contain the password, the wrong password, or the
 * Basic-auth token built from them.
 */

const USERNAME = 'flowpharmacy1';
const PASSWORD = 'Zq7#Flow-Secret!x9Kp';
const WRONG_PASSWORD = 'Wr0ng-Flow#Guess!Vb4';

const basicToken = (password: string) => Buffer.from(`${USERNAME}:${password}`).toString('base64');
const SECRETS = [PASSWORD, WRONG_PASSWORD, basicToken(PASSWORD), basicToken(WRONG_PASSWORD)];

describeEachDialect('whole flow keeps the MSV3 password out of storage and logs', (getDatabase, dialect) => {
  let gw: Gateway;
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
      mockOptions: { sandbox: { credentials } },
    });
  });
  afterAll(() => gw.close());

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

  it('left no password in the database', async () => {
    const stored = await storedText(gw.database, dialect);
    // Proof that the search looks at real data: the notices and the order are there.
    expect(stored).toContain('LS');
    expect(stored).toContain('delivery.received');
    for (const secret of SECRETS) expect(stored.includes(secret), `database contains ${secret}`).toBe(false);
  });

  it('left no password in the logs', () => {
    const logs = logLines.join('');
    expect(logs).toContain('/v1/returns/announce');
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
