import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { ApiError, errorKindOf, type IdempotencyOutcome } from '../core/errors.js';
import { defaultOutcome } from '../core/idempotency-outcome.js';
import type { Clock } from '../lib/clock.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  extendIdempotencyLock,
  type IdempotencyScope,
  releaseIdempotencyKey,
  reopenIdempotencyKey,
} from '../store/idempotency.js';
import type { Tables } from '../store/schema.js';
import {
  IDEMPOTENCY_TTL_MS,
  REPLAYED_HEADERS,
  readIdempotencyKey,
  requestFingerprint,
  sha256Hex,
} from './idempotency-rules.js';
import type { GatewayApp } from './types.js';

/**
 * `Idempotency-Key` for modifying endpoints (docs/idempotency.md "Repeating a request", the IETF httpapi
 * draft, Stripe's rules).
 *
 * A route opts in with `config: { idempotent: true }`. Nothing else is needed: after validation the key
 * is claimed for the caller's API key (so also for its account and mode); a request whose outcome is
 * stored gets it replayed with `Idempotent-Replayed: true` and no handler run; the same key with another
 * request gives 422 `idempotency_key_reused`; a duplicate while the first still runs gives 409
 * `idempotency_request_in_progress` with Retry-After. The handler can read `request.idempotency` (the key,
 * the attempt number and the key's first use, e.g. to derive stable upstream ids). What becomes of the key
 * is the rule by error kind (`defaultOutcome`, core/idempotency-outcome.ts), unless the service that
 * failed says otherwise in its ApiError (`idempotencyKey`), which the error handler applies here with
 * `setIdempotencyOutcome`.
 *
 * Locks: the claim holds a lock of `lockTimeoutMs`, renewed by a heartbeat while the handler runs; a
 * crashed process stops renewing, so its key is taken over by the next identical request once the lock
 * expires (`attempt` > 1 then: reconcile before acting). Records expire after 24 hours; a periodic job
 * purges them (IDEMPOTENCY_PURGE_INTERVAL_MS, src/jobs.ts) and a claim that meets an expired record
 * deletes it.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Honour `Idempotency-Key` on this route (modifying endpoints). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** Set on `idempotent` routes when the request carries an Idempotency-Key and holds it; else null. */
    idempotency: IdempotencyContext | null;
  }
}

export interface IdempotencyContext {
  /** The client's key, verbatim; never stored (only its SHA-256 is). */
  key: string;
  /** 1 for the first execution; higher when an earlier one with this key crashed or left its outcome open. */
  attempt: number;
  /** When the key was first used (epoch ms); the same for every attempt within the key's 24 hours. */
  firstUsedAt: number;
}

export interface IdempotencyDeps {
  db: Kysely<Tables>;
  clock: Clock;
  /** How long a claim holds without a heartbeat, i.e. how soon a crashed process's key can be taken over. */
  lockTimeoutMs: number;
}

interface Holding {
  scope: IdempotencyScope;
  lockToken: string;
  heartbeat: NodeJS.Timeout;
  outcome?: IdempotencyOutcome;
}

const holdings = new WeakMap<FastifyRequest, Holding>();

/** Overrides the default rule for this request (the error handler, for an ApiError's `idempotencyKey`). */
export function setIdempotencyOutcome(request: FastifyRequest, outcome: IdempotencyOutcome): void {
  const holding = holdings.get(request);
  if (holding !== undefined) holding.outcome = outcome;
}

/** Added to the header schema of every opted-in route, so the OpenAPI document shows it. */
const IDEMPOTENCY_KEY_HEADER = {
  type: 'string',
  description:
    'Optional, 1 to 255 printable ASCII characters (a UUID works well), kept for 24 hours per API key. ' +
    'A repeated request with the same key returns the stored response with `Idempotent-Replayed: true` ' +
    'without calling the wholesaler again; the same key with a different request is 422 ' +
    '`idempotency_key_reused`; while the first is still running, 409 `idempotency_request_in_progress`.',
};

export function installIdempotency(app: GatewayApp, deps: IdempotencyDeps): void {
  const { db, clock, lockTimeoutMs } = deps;
  app.decorateRequest('idempotency', null);
  const unwritten = createWriteRetries(clock);
  app.addHook('onClose', async () => unwritten.stop(app.log));

  // Checked before validation, so a malformed key is reported even when the body is wrong too.
  const preValidation = async (request: FastifyRequest) => {
    readIdempotencyKey(request);
  };

  // After auth, rate limit and validation: refused requests never claim a key (Stripe's rule).
  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = readIdempotencyKey(request);
    if (key === undefined) return;
    const scope: IdempotencyScope = {
      apiKeyId: request.auth.keyId,
      accountId: request.auth.accountId,
      keyHash: sha256Hex(key),
    };
    const claim = await claimIdempotencyKey(db, clock, {
      scope,
      fingerprint: requestFingerprint(request),
      requestId: request.id,
      lockMs: lockTimeoutMs,
      ttlMs: IDEMPOTENCY_TTL_MS,
    });
    switch (claim.kind) {
      case 'mismatch':
        throw new ApiError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used with a different request (method, path, query, body or ' +
            'X-MSV3-Username differ). Use a new key for a new request.',
          { param: 'Idempotency-Key' },
        );
      case 'in_progress':
        throw new ApiError(
          'idempotency_request_in_progress',
          'A request with this Idempotency-Key is still being processed; retry shortly to get its result.',
          { param: 'Idempotency-Key', retryAfter: 1 },
        );
      case 'replay':
        return replay(reply, claim.response, claim.originalRequestId);
      case 'claimed': {
        const heartbeat = setInterval(
          () => {
            extendIdempotencyLock(db, clock, scope, claim.lockToken, lockTimeoutMs).catch((err: unknown) =>
              request.log.warn({ err }, 'could not renew the idempotency lock'),
            );
          },
          Math.max(100, Math.floor(lockTimeoutMs / 3)),
        );
        heartbeat.unref();
        holdings.set(request, { scope, lockToken: claim.lockToken, heartbeat });
        request.idempotency = { key, attempt: claim.attempt, firstUsedAt: claim.firstUsedAt };
      }
    }
  };

  // Before the response leaves: a client that saw the answer and retries is guaranteed the replay.
  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const holding = holdings.get(request);
    if (holding === undefined) return payload;
    holdings.delete(request);
    clearInterval(holding.heartbeat);
    const outcome =
      holding.outcome ?? defaultOutcome(reply.statusCode, errorKindOf(reply.statusCode, payload));
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    const { scope, lockToken } = holding;
    const response =
      body === null ? null : { status: reply.statusCode, headers: replayedHeaders(reply), body };
    const write =
      outcome === 'store' && response !== null
        ? async () => {
            if (!(await completeIdempotencyKey(db, clock, scope, lockToken, response)))
              request.log.warn('idempotency lock was lost before the outcome could be stored');
          }
        : outcome === 'release'
          ? () => releaseIdempotencyKey(db, scope, lockToken)
          : // `reopen`, and a streamed body that cannot be stored: the next identical request settles it.
            () => reopenIdempotencyKey(db, scope, lockToken);
    await write().catch((err: unknown) => {
      // The response is real: its record is written again as soon as the database answers, so a retry
      // gets its answer then, not only when the lock lapses (docs/resilience.md).
      request.log.warn({ err, outcome }, 'could not record the idempotent outcome yet; retrying');
      unwritten.retry(write, request.log);
    });
    return payload;
  };

  // Safety net: a response that never reached onSend must not leave a heartbeat running forever.
  const onResponse = async (request: FastifyRequest) => {
    const holding = holdings.get(request);
    if (holding === undefined) return;
    holdings.delete(request);
    clearInterval(holding.heartbeat);
    await reopenIdempotencyKey(db, holding.scope, holding.lockToken).catch(() => {});
  };

  // Only the routes with `config: { idempotent: true }` get these hooks: every other request pays nothing.
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.schema ??= {};
    const schema = route.schema as { headers?: { type?: string; properties?: Record<string, unknown> } };
    // A copy: header schemas are shared between routes (e.g. the MSV3 credential headers).
    const headers = schema.headers ?? { type: 'object', properties: {} };
    schema.headers = {
      ...headers,
      properties: { ...headers.properties, 'idempotency-key': IDEMPOTENCY_KEY_HEADER },
    };
    // Route hooks run after the app's: after auth and rate limit, the log line's onSend and onResponse.
    route.preValidation = withHook(route.preValidation, preValidation);
    route.preHandler = withHook(route.preHandler, preHandler);
    route.onSend = withHook(route.onSend, onSend);
    route.onResponse = withHook(route.onResponse, onResponse);
  });
}

/** A route's hooks of one kind with `hook` appended. */
function withHook<T>(existing: T | T[] | undefined, hook: unknown): T[] {
  return [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook as T];
}

/** First pause before writing an outcome again, doubled each time up to `RETRY_MAX_MS`. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 1_000;
/** How long an outcome is written again before it is given up (the lock has long lapsed by then). */
const RETRY_FOR_MS = 15 * 60_000;
/** Outcomes waiting to be written at once, at most; beyond, the oldest is given up. */
const MAX_UNWRITTEN = 10_000;

interface WriteRetries {
  /** Writes again, at growing intervals, until the database answers (or RETRY_FOR_MS has passed). */
  retry(write: () => Promise<unknown>, log: FastifyBaseLogger): void;
  /** Stops retrying (shutdown); logs what was left unwritten. */
  stop(log: FastifyBaseLogger): void;
}

/**
 * Outcomes whose write failed: the database was down for a moment. The lock still holds the key, and a
 * retry of the request would get 409 until it lapses (IDEMPOTENCY_LOCK_TIMEOUT_MS, a minute by
 * default), though the answer is known. So the write is tried again every second at most, and lands as
 * soon as the database is back. It stays safe: each write is conditional on this attempt's lock token.
 */
function createWriteRetries(clock: Clock): WriteRetries {
  const pending = new Set<NodeJS.Timeout>();
  let stopped = false;
  return {
    retry(write, log) {
      const giveUpAt = clock.now() + RETRY_FOR_MS;
      let pause = RETRY_FIRST_MS;
      let attempts = 1;
      const schedule = () => {
        if (stopped) return;
        if (pending.size >= MAX_UNWRITTEN) {
          const oldest = pending.values().next().value as NodeJS.Timeout;
          clearTimeout(oldest);
          pending.delete(oldest);
          log.error('too many idempotent outcomes waiting for the database: the oldest is given up');
        }
        const timer = setTimeout(() => {
          pending.delete(timer);
          attempts++;
          write().then(
            () => log.info({ attempts }, 'recorded the idempotent outcome once the database answered'),
            (err: unknown) => {
              if (clock.now() >= giveUpAt) {
                log.error({ err, attempts }, 'gave up recording the idempotent outcome');
                return;
              }
              pause = Math.min(RETRY_MAX_MS, pause * 2);
              schedule();
            },
          );
        }, pause);
        timer.unref();
        pending.add(timer);
      };
      schedule();
    },
    stop(log) {
      stopped = true;
      if (pending.size > 0)
        log.warn({ unwritten: pending.size }, 'idempotent outcomes left unwritten at shutdown');
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
    },
  };
}

function replay(
  reply: FastifyReply,
  response: { status: number; headers: Record<string, string>; body: string },
  originalRequestId: string,
): FastifyReply {
  reply.code(response.status);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  reply.header('idempotent-replayed', 'true');
  reply.header('original-request', originalRequestId);
  return reply.send(response.body);
}

function replayedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}
