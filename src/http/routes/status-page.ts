import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { VERSION } from '../../core/version.js';
import { pingDatabase } from '../../store/ping.js';
import { countPendingDeliveries } from '../../store/webhook-outbox.js';
import type { AppDeps } from '../app-deps.js';
import { routeErrors } from '../route-errors.js';
import { renderStatusPage, type StatusPageData } from '../status-page/render.js';
import type { GatewayApp } from '../types.js';

/** How long the page waits for the database's `select 1`. */
const DATABASE_TIMEOUT_MS = 1_000;

/** A browser asks for the token as a password: any user name goes. */
const CHALLENGE = 'Basic realm="msv3-gateway status", charset="UTF-8"';

/**
 * The operator status page (docs/observability.md "The status page"): only with STATUS_PAGE_TOKEN set,
 * and only to that token, sent as the password of HTTP Basic (a browser prompts for it) or as a bearer
 * token. It is no API route: an API key opens nothing here, and no account's data is shown, only the
 * process's view of wholesalers and dependencies (with WORKERS > 1, every worker's).
 */
export function registerStatusPageRoutes(app: GatewayApp, deps: AppDeps): void {
  const token = deps.config.statusPage.token;
  if (token === undefined) return;
  const expected = digest(token);
  app.get(
    '/status',
    {
      config: {
        public: true,
        errors: routeErrors(['status_token_invalid'], {
          status_token_invalid: 'the token is missing or wrong; an API key does not open this page',
        }),
      },
      schema: { hide: true },
    },
    async (request, reply) => {
      const presented = presentedToken(request);
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        throw new ApiError(
          'status_token_invalid',
          'The status page needs STATUS_PAGE_TOKEN: as the password of HTTP Basic (any user name) or as Authorization: Bearer <token>.',
          { headers: { 'www-authenticate': CHALLENGE } },
        );
      }
      const data = await gather(deps);
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header(
          'content-security-policy',
          "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        )
        .header('x-content-type-options', 'nosniff')
        .send(renderStatusPage(data));
    },
  );
}

async function gather(deps: AppDeps): Promise<StatusPageData> {
  const db = deps.database.db;
  const [database, backlog, wholesalers] = await Promise.all([
    pingDatabase(db, DATABASE_TIMEOUT_MS),
    countPendingDeliveries(db).catch(() => null),
    deps.metrics.wholesalerStatus?.() ?? deps.metrics.wholesalers.status(),
  ]);
  const connected = deps.rateLimiter.redisConnected?.();
  const workerEnabled = deps.config.webhooks.workerEnabled;
  return {
    version: VERSION,
    generatedAt: deps.clock.now(),
    database: { dialect: deps.database.dialect, ...database },
    redis: connected === undefined ? { used: false } : { used: true, up: connected },
    webhooks: {
      backlog,
      worker: !workerEnabled ? 'disabled' : deps.webhooks.worker.running ? 'running' : 'stopped',
    },
    wholesalers,
  };
}

/** The token of `Authorization: Basic …` (its password) or `Authorization: Bearer …`. */
function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization ?? '';
  const bearer = /^Bearer (.+)$/i.exec(header)?.[1];
  if (bearer !== undefined) return bearer;
  const basic = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header)?.[1];
  if (basic === undefined) return undefined;
  const decoded = Buffer.from(basic, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : decoded.slice(colon + 1);
}

/** Equal-length digests, so the comparison takes the same time whatever was sent. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
