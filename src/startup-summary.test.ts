import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { manualClock } from './lib/clock.js';
import { createLogger } from './observability/logger.js';
import { keysLine, reportStartup, summaryLines } from './startup-summary.js';
import { createAccount } from './store/accounts.js';
import { createApiKey, revokeApiKey } from './store/api-keys.js';
import { openDatabase } from './store/database.js';
import { migrateToLatest } from './store/migrate.js';

const TOPICS = [
  'database',
  'rate limits',
  'redis',
  'workers',
  'tracing',
  'private endpoints',
  'sandbox',
  'listening',
];

describe('the start-up summary', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-summary-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('names PostgreSQL without its password, Redis, the workers, tracing by origin and the allowed ranges', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://msv3:S3cret%40pw@db.internal:5432/msv3',
      REDIS_URL: 'redis://:r3dis-pw@cache.internal:6379',
      WORKERS: 'auto',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318/tenant-token-123',
      ALLOWED_PRIVATE_CIDRS: '10.20.0.0/16,::1/128',
      SANDBOX_URL: 'http://mock.internal:9090',
    });
    const lines = summaryLines({
      config,
      url: 'http://0.0.0.0:8080',
      sandboxUrl: 'http://mock.internal:9090',
      workers: 4,
      rateLimitStore: 'redis',
    });
    expect(lines.map((line) => line.fields.startup)).toEqual(TOPICS);
    expect(lines.map((line) => line.msg)).toEqual([
      'database: PostgreSQL at postgres://msv3@db.internal:5432/msv3',
      'rate limits: counted in Redis, shared by every gateway process using it (RATE_LIMIT_STORE=auto)',
      'redis: redis://cache.internal:6379, connected, for the rate limits',
      'workers: 4 worker processes sharing the port (WORKERS=auto)',
      'tracing: on, spans to the collector at https://collector.example:4318 (sampler parentbased_always_on)',
      'private endpoints: allowed in 10.20.0.0/16, ::1/128 only (ALLOWED_PRIVATE_CIDRS)',
      'sandbox: the external mock wholesaler at http://mock.internal:9090 (SANDBOX_URL)',
      'listening on http://0.0.0.0:8080 (4 workers)',
    ]);
    const text = JSON.stringify(lines);
    for (const secret of ['S3cret', 'r3dis-pw', 'tenant-token-123']) expect(text).not.toContain(secret);
  });

  it('names the SQLite file by its full path, memory limits, no Redis, no tracing, public endpoints only', () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite:./data/gateway.db' });
    const lines = summaryLines({
      config,
      url: 'http://127.0.0.1:8080',
      sandboxUrl: 'http://127.0.0.1:40000',
      workers: 1,
      rateLimitStore: 'memory',
    });
    expect(lines.map((line) => line.msg)).toEqual([
      `database: SQLite file ${join(process.cwd(), 'data', 'gateway.db')}`,
      "rate limits: counted in this process's memory; every gateway process counts its own (RATE_LIMIT_STORE=auto)",
      'redis: not used (REDIS_URL is not set)',
      'workers: one process (WORKERS=1)',
      'tracing: off (OTEL_EXPORTER_OTLP_ENDPOINT is not set)',
      'private endpoints: refused; custom wholesaler and webhook URLs must be public (ALLOW_PRIVATE_ENDPOINTS=false)',
      'sandbox: the built-in mock wholesaler at http://127.0.0.1:40000, its state in the database',
      'listening on http://127.0.0.1:8080',
    ]);
  });

  it('says a set REDIS_URL is not used when the limits are counted elsewhere', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://msv3@db/msv3',
      REDIS_URL: 'redis://cache:6379',
      RATE_LIMIT_STORE: 'database',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
    });
    const lines = summaryLines({ config, url: 'u', sandboxUrl: 's', workers: 1, rateLimitStore: 'database' });
    expect(lines.find((l) => l.fields.startup === 'redis')?.msg).toBe(
      'redis: redis://cache:6379 is set but not used (RATE_LIMIT_STORE=database)',
    );
    expect(lines.find((l) => l.fields.startup === 'private endpoints')?.msg).toBe(
      'private endpoints: allowed, every private and loopback address (ALLOW_PRIVATE_ENDPOINTS=true)',
    );
  });

  it('says how many keys exist and how to make one, and what an empty database means', () => {
    expect(keysLine({ test: 0, live: 0, revoked: 0 })).toBe(
      'No usable API key in the database: every request is refused with 401 api_key_invalid. Make one: msv3-gateway keys create --name NAME --mode test|live',
    );
    expect(keysLine({ test: 1, live: 2, revoked: 1 })).toBe(
      'API keys: 3 usable (1 test, 2 live, 1 revoked); keys list shows them. Make another: msv3-gateway keys create --name NAME --mode test|live',
    );
  });

  it('logs one line per topic and the key count, then prints the start-up lines with it', async () => {
    const clock = manualClock(Date.parse('2026-11-28T10:00:00Z'));
    const database = await openDatabase(`sqlite:${join(folder, 'report', 'gateway.db')}`);
    await migrateToLatest(database);
    const account = await createAccount(database.db, clock, { name: 'Apotheke' });
    await createApiKey(database.db, clock, { accountId: account.id, name: 'a', mode: 'live' });
    const revoked = await createApiKey(database.db, clock, {
      accountId: account.id,
      name: 'b',
      mode: 'test',
    });
    await revokeApiKey(database.db, clock, revoked.apiKey.id);
    const logged: { startup?: string; msg: string }[] = [];
    const printed: string[] = [];
    const secrets: string[] = [];
    await reportStartup({
      config: loadConfig({ DATABASE_URL: `sqlite:${join(folder, 'report', 'gateway.db')}` }),
      database,
      clock,
      url: 'http://127.0.0.1:8080',
      sandboxUrl: 'http://127.0.0.1:40000',
      workers: 1,
      logger: createLogger({
        level: 'info',
        destination: { write: (line) => logged.push(JSON.parse(line)) },
      }),
      print: (line) => printed.push(line),
      printSecret: (line) => secrets.push(line),
    });
    await database.close();
    expect(logged.map((line) => line.startup)).toEqual([...TOPICS, 'api keys']);
    expect(logged.at(-1)?.msg).toBe('api keys: 1 usable (0 test, 1 live), 1 revoked');
    expect(printed).toEqual([
      'msv3-gateway 0.1.0 listening on http://127.0.0.1:8080',
      'API docs: http://127.0.0.1:8080/docs  (OpenAPI: http://127.0.0.1:8080/v1/openapi.json)',
      'Sandbox wholesaler (test keys): http://127.0.0.1:40000',
      'API keys: 1 usable (0 test, 1 live, 1 revoked); keys list shows them. Make another: msv3-gateway keys create --name NAME --mode test|live',
    ]);
    expect(secrets).toEqual([]);
  });
});
