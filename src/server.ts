import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { GatewayApp } from './http/types.js';
import { VERSION } from './http/version.js';
import { type Clock, systemClock } from './lib/clock.js';
import { createLogger } from './observability/logger.js';
import { createMetrics } from './observability/metrics.js';
import { createRateLimiter } from './ratelimit/create.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import { createAccount } from './store/accounts.js';
import { countApiKeys, createApiKey } from './store/api-keys.js';
import { type Database, openDatabase } from './store/database.js';
import { migrateToLatest } from './store/migrate.js';

export interface StartServerOptions {
  config: Config;
  logger?: Logger;
  clock?: Clock;
  /** Human-readable lines (URL, first key); stderr in the CLI, so stdout stays JSON logs. */
  print?: (line: string) => void;
  /** Swap in a limiter (tests); by default the configured store is used. */
  rateLimiter?: RateLimiter;
}

export interface RunningServer {
  app: GatewayApp;
  url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish within SHUTDOWN_TIMEOUT_MS (then cuts
   * the remaining connections), closes the rate limiter and the database. `clean` is false if cut.
   */
  close(): Promise<{ clean: boolean }>;
}

/** config → database → migrations → first key → rate limiter → app → listen. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const print = options.print ?? (() => {});
  const logger = options.logger ?? createLogger({ level: config.log.level });
  const database = await openDatabase(config.database.url, {
    onIdleError: (err) => logger.warn({ err }, 'idle database connection failed'),
  });
  const opened: { close(): Promise<void> }[] = [database];
  try {
    const applied = await migrateToLatest(database);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    const firstKey = await createFirstKeyIfNone(database, clock);
    const rateLimiter = options.rateLimiter ?? (await createRateLimiter(config, database));
    opened.unshift(rateLimiter);
    const metrics = createMetrics({ processMetrics: true });
    const app = await buildApp({ config, database, rateLimiter, logger, clock, metrics });
    opened.unshift(app);
    await app.listen({ host: config.server.host, port: config.server.port });
    const url = serverUrl(app);

    print(`msv3-gateway ${VERSION} listening on ${url}`);
    print(`API docs: ${url}/docs  (OpenAPI: ${url}/v1/openapi.json)`);
    if (firstKey !== undefined) {
      print(`First start: created account ${firstKey.accountId} and a test API key (shown only this once):`);
      print(`  ${firstKey.secret}`);
      print(`Try: curl -H 'X-API-Key: ${firstKey.secret}' ${url}/v1/wholesalers`);
    }
    return {
      app,
      url,
      close: () => closeGracefully(app, rateLimiter, database, config.server.shutdownTimeoutMs, logger),
    };
  } catch (error) {
    for (const resource of opened) await resource.close().catch(() => {});
    throw error;
  }
}

async function closeGracefully(
  app: GatewayApp,
  rateLimiter: RateLimiter,
  database: Database,
  timeoutMs: number,
  logger: Logger,
): Promise<{ clean: boolean }> {
  let clean = true;
  const deadline = setTimeout(() => {
    clean = false;
    logger.warn({ timeout_ms: timeoutMs }, 'shutdown timeout reached; closing remaining connections');
    app.server.closeAllConnections();
  }, timeoutMs);
  try {
    await app.close();
  } finally {
    clearTimeout(deadline);
    await rateLimiter
      .close()
      .catch((err: unknown) => logger.warn({ err }, 'closing the rate limiter failed'));
    await database.close().catch((err: unknown) => logger.warn({ err }, 'closing the database failed'));
  }
  return { clean };
}

/** On the very first start there is no key to call the API with; make one. */
async function createFirstKeyIfNone(
  database: Database,
  clock: Clock,
): Promise<{ accountId: string; secret: string } | undefined> {
  if ((await countApiKeys(database.db)) > 0) return undefined;
  const account = await createAccount(database.db, clock, { name: 'Default account' });
  const { secret } = await createApiKey(database.db, clock, {
    accountId: account.id,
    name: 'first key',
    mode: 'test',
  });
  return { accountId: account.id, secret };
}

function serverUrl(app: GatewayApp): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * SIGTERM/SIGINT: close gracefully, then exit 0 (1 if connections had to be cut or closing failed).
 * A second signal exits at once.
 */
export function exitOnSignals(server: RunningServer, logger: Logger, exit: (code: number) => void): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal; exiting now');
      exit(1);
      return;
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server.close().then(
      ({ clean }) => {
        logger.info({ clean }, 'stopped');
        exit(clean ? 0 : 1);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
