import type { Logger } from 'pino';
import { type Config, misspeltVariableMessage, misspeltVariables } from './config.js';
import { VERSION } from './core/version.js';
import type { Clock } from './lib/clock.js';
import { withoutPassword } from './lib/url-password.js';
import { type RateLimitStore, resolveRateLimitStore } from './ratelimit/create.js';
import { countApiKeysByState } from './store/api-keys.js';
import { type Database, sqliteFile } from './store/database.js';

/** One start-up log line: its fields (`startup` names the topic) and its message. */
export interface SummaryLine {
  fields: { startup: string; [field: string]: unknown };
  msg: string;
}

export interface StartupFacts {
  config: Config;
  /** Where the gateway listens, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Where `pk_test_` calls go: the built-in mock, or SANDBOX_URL. */
  sandboxUrl: string;
  /** Processes serving HTTP: 1, or the primary's worker count with WORKERS > 1. */
  workers: number;
  /** Where request budgets are counted (RATE_LIMIT_STORE resolved). */
  rateLimitStore: RateLimitStore;
  /** HEALTH_PORT's address, when the probes have a port of their own. */
  healthUrl?: string | undefined;
}

const MAKE_A_KEY = 'msv3-gateway keys create --name NAME --mode test|live';

/**
 * What a start-up says about itself (docs/operating.md "Start-up lines"): one log line each for the
 * database, the rate-limit store, Redis, the workers, tracing, private endpoints, the sandbox and the
 * listening address, so that an operator reading the log sees what this process really uses. URLs
 * appear without their passwords; the tracing collector with its origin only (some take a token in the
 * path).
 */
export function summaryLines(facts: StartupFacts): SummaryLine[] {
  const { config, workers } = facts;
  return [
    databaseLine(config.database.url),
    rateLimitLine(facts),
    redisLine(config, facts.rateLimitStore),
    {
      fields: { startup: 'workers', workers },
      msg:
        workers === 1
          ? `workers: one process (WORKERS=${config.server.workers})`
          : `workers: ${workers} worker processes sharing the port (WORKERS=${config.server.workers})`,
    },
    tracingLine(config.tracing),
    privateEndpointsLine(config.network),
    {
      fields: { startup: 'sandbox', sandbox: facts.sandboxUrl },
      msg:
        config.wholesalers.sandboxUrl === undefined
          ? `sandbox: the built-in mock wholesaler at ${facts.sandboxUrl}, its state in the database`
          : `sandbox: the external mock wholesaler at ${facts.sandboxUrl} (SANDBOX_URL)`,
    },
    {
      fields: { startup: 'listening', url: facts.url, health_url: facts.healthUrl ?? null },
      msg: `listening on ${facts.url}${workers > 1 ? ` (${workers} workers)` : ''}${facts.healthUrl === undefined ? '' : `; health probes also on ${facts.healthUrl} (HEALTH_PORT)`}`,
    },
  ];
}

function databaseLine(url: string): SummaryLine {
  if (!url.startsWith('sqlite:')) {
    const shown = withoutPassword(url);
    return { fields: { startup: 'database', database: shown }, msg: `database: PostgreSQL at ${shown}` };
  }
  const file = sqliteFile(url);
  return file === undefined
    ? {
        fields: { startup: 'database', database: url },
        msg: `database: SQLite in memory (${url}), gone when the process stops`,
      }
    : { fields: { startup: 'database', database: url, file }, msg: `database: SQLite file ${file}` };
}

function rateLimitLine({ config, rateLimitStore, workers }: StartupFacts): SummaryLine {
  const where: Record<RateLimitStore, string> = {
    redis: 'in Redis, shared by every gateway process using it',
    database: 'in PostgreSQL, shared by every gateway process on that database',
    memory:
      workers > 1
        ? `in memory by the primary process, shared by its ${workers} workers; other gateway processes count their own`
        : "in this process's memory; every gateway process counts its own",
  };
  return {
    fields: { startup: 'rate limits', store: rateLimitStore, setting: config.rateLimit.store },
    msg: `rate limits: counted ${where[rateLimitStore]} (RATE_LIMIT_STORE=${config.rateLimit.store})`,
  };
}

function redisLine(config: Config, store: RateLimitStore): SummaryLine {
  const url = config.redis.url;
  if (url === undefined) {
    return { fields: { startup: 'redis', redis: null }, msg: 'redis: not used (REDIS_URL is not set)' };
  }
  const shown = withoutPassword(url);
  return store === 'redis'
    ? { fields: { startup: 'redis', redis: shown }, msg: `redis: ${shown}, connected, for the rate limits` }
    : {
        fields: { startup: 'redis', redis: shown, used: false },
        msg: `redis: ${shown} is set but not used (RATE_LIMIT_STORE=${config.rateLimit.store})`,
      };
}

function tracingLine(tracing: Config['tracing']): SummaryLine {
  if (tracing.endpoint === undefined) {
    return {
      fields: { startup: 'tracing', collector: null },
      msg: 'tracing: off (OTEL_EXPORTER_OTLP_ENDPOINT is not set)',
    };
  }
  const collector = new URL(tracing.endpoint).origin;
  return {
    fields: { startup: 'tracing', collector, sampler: tracing.sampler },
    msg: `tracing: on, spans to the collector at ${collector} (sampler ${tracing.sampler})`,
  };
}

function privateEndpointsLine(network: Config['network']): SummaryLine {
  if (network.allowPrivateEndpoints) {
    return {
      fields: { startup: 'private endpoints', allowed: 'all' },
      msg: 'private endpoints: allowed, every private and loopback address (ALLOW_PRIVATE_ENDPOINTS=true)',
    };
  }
  const cidrs = network.allowedPrivateCidrs ?? [];
  return cidrs.length === 0
    ? {
        fields: { startup: 'private endpoints', allowed: 'none' },
        msg: 'private endpoints: refused; custom wholesaler and webhook URLs must be public (ALLOW_PRIVATE_ENDPOINTS=false)',
      }
    : {
        fields: { startup: 'private endpoints', allowed: cidrs },
        msg: `private endpoints: allowed in ${cidrs.join(', ')} only (ALLOWED_PRIVATE_CIDRS)`,
      };
}

/** The printed line about the keys a start found (a first start prints its new key instead). */
export function keysLine(counts: { test: number; live: number; revoked: number }): string {
  const usable = counts.test + counts.live;
  if (usable === 0) {
    const revoked = counts.revoked === 0 ? '' : ` (${counts.revoked} revoked)`;
    return `No usable API key in the database${revoked}: every request is refused with 401 api_key_invalid. Make one: ${MAKE_A_KEY}`;
  }
  const revoked = counts.revoked === 0 ? '' : `, ${counts.revoked} revoked`;
  return `API keys: ${usable} usable (${counts.test} test, ${counts.live} live${revoked}); keys list shows them. Make another: ${MAKE_A_KEY}`;
}

/** Variables that look like misspelt settings, one warning each (STRICT_CONFIG makes them an error). */
export function warnMisspeltVariables(logger: Logger, env: NodeJS.ProcessEnv): void {
  for (const misspelt of misspeltVariables(env)) {
    logger.warn(
      { variable: misspelt.typed, did_you_mean: misspelt.meant },
      `${misspeltVariableMessage(misspelt)}; it is ignored`,
    );
  }
}

export interface StartupReport {
  config: Config;
  database: Database;
  clock: Clock;
  url: string;
  sandboxUrl: string;
  workers: number;
  /** This start created the first account and key (CREATE_FIRST_KEY on an empty database). */
  firstKey?: { accountId: string; secret: string } | undefined;
  /** HEALTH_PORT's address, when the probes have a port of their own. */
  healthUrl?: string | undefined;
  logger: Logger;
  /** Human-readable lines (stderr in the CLI). */
  print(line: string): void;
  /** The first key's lines (stdout in the CLI, never a log record). */
  printSecret(line: string): void;
}

/**
 * Everything a start says once it listens: the summary lines in the log, then the printed lines
 * (listening address, docs, sandbox) and either the first key or what keys exist and how to make one.
 * A single process says it once, a WORKERS > 1 gateway once from its primary.
 */
export async function reportStartup(report: StartupReport): Promise<void> {
  const { config, database, logger, print, url, firstKey } = report;
  const rateLimitStore = resolveRateLimitStore(config, database);
  for (const line of summaryLines({ ...report, rateLimitStore })) logger.info(line.fields, line.msg);
  let keys: string | undefined;
  if (firstKey === undefined) {
    try {
      const counts = await countApiKeysByState(database.db, report.clock.now());
      const { test, live, revoked } = counts;
      logger.info(
        { startup: 'api keys', usable_test: test, usable_live: live, revoked },
        `api keys: ${test + live} usable (${test} test, ${live} live), ${revoked} revoked`,
      );
      keys = keysLine(counts);
    } catch (err) {
      logger.warn({ err }, 'api keys: not counted, the database did not answer');
    }
  }
  print(
    `msv3-gateway ${VERSION} listening on ${url}${report.workers > 1 ? ` (${report.workers} workers)` : ''}`,
  );
  print(`API docs: ${url}/docs  (OpenAPI: ${url}/v1/openapi.json)`);
  print(`Sandbox wholesaler (test keys): ${report.sandboxUrl}`);
  if (report.healthUrl !== undefined) {
    print(
      `Health probes on a port of their own: ${report.healthUrl}/v1/health, ${report.healthUrl}/v1/health/ready`,
    );
  }
  if (keys !== undefined) print(keys);
  if (firstKey !== undefined) {
    report.printSecret(
      `First start: created account ${firstKey.accountId} and a test API key (shown only this once):`,
    );
    report.printSecret(`  ${firstKey.secret}`);
    report.printSecret(`Try: curl -H 'X-API-Key: ${firstKey.secret}' ${url}/v1/wholesalers`);
  }
}
