import { readFileSync } from 'node:fs';
import { type Dispatcher, Pool } from 'undici';
import type { HostLookup } from '../lib/address-policy.js';
import { type Clock, systemClock } from '../lib/clock.js';
import type { ConnectPolicy } from '../lib/guarded-connector.js';
import { MAX_READABLE_ANSWER_BYTES } from './answer-text.js';
import { type Breaker, type BreakerSnapshot, type BreakerTransition, createBreaker } from './breaker.js';
import { type ConcurrencyLimiter, createConcurrencyLimiter } from './concurrency.js';
import { basicAuthorization, type Credentials } from './credentials.js';
import type { DeviationName } from './deviations.js';
import type { ProbeRequest } from './probe-request.js';
import type { DecodeResult } from './result.js';
import { stopNotice } from './stop-notice.js';
import { createConnector, type ExchangeLimits, exchange, type RawOutcome } from './transport-exchange.js';
import {
  type CallContext,
  failureToError,
  type Interpreted,
  interpretProbe,
  interpretResponse,
  secretsOf,
} from './transport-outcome.js';
import {
  signalsOutage,
  type UpstreamError,
  type UpstreamErrorFields,
  upstreamError,
} from './upstream-error.js';

export type { BreakerSnapshot, BreakerState } from './breaker.js';

export interface TransportOptions {
  connectTimeoutMs: number;
  /** From the request being written until the response headers are complete. */
  headersTimeoutMs: number;
  /** Longest pause between two chunks of the response body. */
  bodyTimeoutMs: number;
  /** Deadline for a whole call, queueing for a connection included. */
  totalTimeoutMs: number;
  probeTimeoutMs: number;
  /** A larger answer is abandoned mid-stream (`too_large`). */
  maxResponseBytes: number;
  connectionsPerOrigin: number;
  /**
   * Connections for one origin instead of `connectionsPerOrigin`, where it returns a value (`null`: no
   * limit); e.g. the sandbox, whose targets are per account and each capped by `maxConcurrentPerTarget`.
   */
  connectionsFor?: (origin: string) => number | null | undefined;
  keepAliveTimeoutMs: number;
  /**
   * Calls in progress at once. Where the origin's connections are capped, every target at that origin
   * shares one budget of at most that many (see `limiterFor`); where they are not, each target has its own.
   */
  maxConcurrentPerTarget: number;
  /** Calls waiting for a slot, per budget (all accounts together). */
  maxQueuePerTarget: number;
  maxQueueWaitMs: number;
  /** See `ConcurrencyOptions.maxRefusalHoldMs`. */
  maxRefusalHoldMs: number;
  breakerFailureThreshold: number;
  breakerCoolDownMs: number;
  /** Default `msv3-gateway/<version>`; some wholesalers sit behind WAFs that block unusual agents. */
  userAgent?: string;
  /**
   * Applies to every connection of this transport (through the guarded connector); use a second transport
   * for endpoints with another policy.
   */
  addressPolicy?: ConnectPolicy;
  /** Host name resolution of the guarded connector (tests; DNS otherwise). */
  lookup?: HostLookup;
  /** For tests: build the dispatcher for an origin (the options carry the policy-enforcing connector). */
  dispatcherFactory?: (origin: string, options: Pool.Options) => Dispatcher;
}

const DEFAULT_TRANSPORT_OPTIONS: Readonly<TransportOptions> = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  totalTimeoutMs: 60_000,
  probeTimeoutMs: 5_000,
  maxResponseBytes: MAX_READABLE_ANSWER_BYTES,
  connectionsPerOrigin: 16,
  keepAliveTimeoutMs: 4_000,
  maxConcurrentPerTarget: 16,
  maxQueuePerTarget: 64,
  maxQueueWaitMs: 5_000,
  maxRefusalHoldMs: 0,
  breakerFailureThreshold: 5,
  breakerCoolDownMs: 30_000,
};

export interface BreakerChange extends BreakerTransition<UpstreamError> {
  target: string;
}

export interface TransportDeps {
  clock?: Clock;
  /** Circuit state changes per target; must not throw. */
  onBreakerChange?: (change: BreakerChange) => void;
  /**
   * The gateway's shutdown (docs/resilience.md "Shutdown"). Once aborted, calls in flight end at once as
   * `shutdown` errors, `maybeDelivered` if their request had been sent, so their callers can still answer;
   * later calls are refused as not sent. Probes end too.
   */
  stop?: AbortSignal;
}

export interface CallInput {
  /** Wholesaler id: the unit of concurrency cap and circuit breaker. */
  target: string;
  url: string;
  operation: string;
  /** SOAP 1.2 action, sent as the `action` parameter of the content type. */
  action: string;
  /** The complete SOAP envelope. */
  body: string;
  credentials: Credentials;
  /**
   * The gateway account the call is made for: the target's slots are shared fairly between accounts
   * (docs/resilience.md "Overload"); calls without one share a single account's share.
   */
  account?: string;
  /** Aborting rejects the call with `signal.reason` (no UpstreamError: the caller gave up, not the wholesaler). */
  signal?: AbortSignal;
}

export type CallResult<T> =
  /** `deviations`: tolerated schema deviations of the answer (msv3/deviations.ts), if any. */
  | { ok: true; value: T; latencyMs: number; status: number; deviations?: readonly DeviationName[] }
  | { ok: false; error: UpstreamError; latencyMs: number };

/** What a target's calls are doing right now (`Transport.usage`), for metrics and the status page. */
interface TargetUsage {
  target: string;
  /** Calls holding a slot (sent or about to be sent). */
  active: number;
  /** Calls waiting for a slot. */
  queued: number;
  breaker: BreakerSnapshot;
}

export interface ProbeResult {
  up: boolean;
  status?: number;
  latencyMs: number;
  error?: UpstreamError;
}

interface ProbeInput {
  target: string;
  url: string;
  request: ProbeRequest;
}

export interface Transport {
  call<T>(input: CallInput, decode: (xml: string) => DecodeResult<T>): Promise<CallResult<T>>;
  /**
   * Credential-free reachability check (`probeRequest`: verbindungTesten without credentials); bypasses
   * the breaker and the concurrency cap.
   */
  probe(input: ProbeInput): Promise<ProbeResult>;
  breakerState(target: string): BreakerSnapshot;
  /** Every target called so far: its calls in progress and waiting, and its circuit. */
  usage(): TargetUsage[];
  /** Waits for calls in flight, then closes all connections; later calls fail as `unreachable`. */
  close(): Promise<void>;
}

const ACCEPT = 'application/soap+xml, text/xml;q=0.9, */*;q=0.1';
const PROBE_MAX_BYTES = 64 * 1024;

// The two helpers below write their objects out in full rather than as `{ ...a, b }`, which is slow on
// Node 20 (src/lib/extend.ts).

/** A wholesaler request's headers; probes send no authorization. */
function requestHeaders(
  contentType: string,
  authorization: string | undefined,
  userAgent: string,
): Record<string, string> {
  return authorization === undefined
    ? { 'content-type': contentType, accept: ACCEPT, 'user-agent': userAgent }
    : { 'content-type': contentType, authorization, accept: ACCEPT, 'user-agent': userAgent };
}

/** An interpreted answer with the call's duration. */
function withLatency<T>(result: Interpreted<T>, latencyMs: number): CallResult<T> {
  if (!result.ok) return { ok: false, error: result.error, latencyMs };
  const { value, status, deviations } = result;
  return deviations === undefined
    ? { ok: true, value, status, latencyMs }
    : { ok: true, value, status, deviations, latencyMs };
}

export function createTransport(
  options: Partial<TransportOptions> = {},
  deps: TransportDeps = {},
): Transport {
  const config: TransportOptions = { ...DEFAULT_TRANSPORT_OPTIONS, ...options };
  const clock = deps.clock ?? systemClock;
  const { stop } = deps;
  const stopping = stop === undefined ? undefined : stopNotice(stop);
  const userAgent = config.userAgent ?? defaultUserAgent();
  const connect = createConnector(config.connectTimeoutMs, config.addressPolicy, config.lookup);
  const dispatchers = new Map<string, Dispatcher>();
  const breakers = new Map<string, Breaker<UpstreamError>>();
  const limiters = new Map<string, ConcurrencyLimiter>();
  const loads = new Map<string, { active: number; queued: number }>();
  const endpoints = new Map<string, Endpoint>();
  const contentTypes = new Map<string, string>();
  let closed = false;

  function dispatcherFor(origin: string): Dispatcher {
    let dispatcher = dispatchers.get(origin);
    if (!dispatcher) {
      const poolOptions: Pool.Options = {
        connections: connectionsOf(origin),
        keepAliveTimeout: config.keepAliveTimeoutMs,
        headersTimeout: config.headersTimeoutMs,
        bodyTimeout: config.bodyTimeoutMs,
        connect,
      };
      dispatcher = config.dispatcherFactory?.(origin, poolOptions) ?? new Pool(origin, poolOptions);
      dispatchers.set(origin, dispatcher);
    }
    return dispatcher;
  }

  function connectionsOf(origin: string): number | null {
    const chosen = config.connectionsFor?.(origin);
    return chosen === undefined ? config.connectionsPerOrigin : chosen;
  }

  function breakerFor(target: string): Breaker<UpstreamError> {
    let breaker = breakers.get(target);
    if (!breaker) {
      const onChange = deps.onBreakerChange;
      breaker = createBreaker<UpstreamError>({
        failureThreshold: config.breakerFailureThreshold,
        coolDownMs: config.breakerCoolDownMs,
        clock,
        onChange: onChange && ((change) => onChange({ target, ...change })),
      });
      breakers.set(target, breaker);
    }
    return breaker;
  }

  /**
   * The budget a call waits in. Where the origin's pool is capped, all its targets share one budget no
   * larger than the pool (custom wholesalers of several accounts at one URL, say): a call granted a slot
   * then always finds a connection, and no call waits in the pool, where the queue's deadline and the
   * fairness between accounts would not see it (docs/resilience.md "Overload"). Where the pool is not
   * capped (the sandbox), each target has a budget of its own.
   */
  function limiterFor(target: string, origin: string): ConcurrencyLimiter {
    const connections = connectionsOf(origin);
    const key = connections === null ? `target ${target}` : `origin ${origin}`;
    let limiter = limiters.get(key);
    if (!limiter) {
      limiter = createConcurrencyLimiter({
        maxConcurrent:
          connections === null
            ? config.maxConcurrentPerTarget
            : Math.min(connections, config.maxConcurrentPerTarget),
        maxQueue: config.maxQueuePerTarget,
        maxWaitMs: config.maxQueueWaitMs,
        maxRefusalHoldMs: config.maxRefusalHoldMs,
      });
      limiters.set(key, limiter);
    }
    return limiter;
  }

  function loadOf(target: string): { active: number; queued: number } {
    let load = loads.get(target);
    if (!load) {
      load = { active: 0, queued: 0 };
      loads.set(target, load);
    }
    return load;
  }

  function send(
    url: Endpoint,
    contentType: string,
    authorization: string | undefined,
    body: string,
    limits: ExchangeLimits,
    signal?: AbortSignal,
  ) {
    if (closed) return Promise.resolve<RawOutcome>({ kind: 'closed' });
    const request: Dispatcher.DispatchOptions = {
      origin: url.origin,
      path: url.path,
      method: 'POST',
      headers: requestHeaders(contentType, authorization, userAgent),
      body: Buffer.from(body, 'utf8'),
    };
    return exchange(dispatcherFor(url.origin), request, limits, signal, stopping);
  }

  async function call<T>(input: CallInput, decode: (xml: string) => DecodeResult<T>): Promise<CallResult<T>> {
    const started = performance.now();
    const { target, operation, signal } = input;
    const url = remembered(endpoints, input.url, parseEndpoint);
    const authorization = basicAuthorization(input.credentials);
    const contentType = remembered(contentTypes, input.action, soapContentType);
    const context: CallContext = {
      target,
      operation,
      secrets: secretsOf(input.credentials, authorization),
      clock,
    };
    const fail = (fields: UpstreamErrorFields): CallResult<T> => ({
      ok: false,
      error: upstreamError(fields),
      latencyMs: performance.now() - started,
    });
    signal?.throwIfAborted();
    if (stop?.aborted) return fail({ reason: 'shutdown', target, operation, maybeDelivered: false });

    // Refuse before queueing while the circuit is open, so waiting callers do not fill the queue for nothing.
    const breaker = breakerFor(target);
    const { state, retryAfterMs } = breaker.snapshot();
    if (state === 'open' && retryAfterMs > 0) {
      return fail({ reason: 'circuit_open', target, operation, maybeDelivered: false, retryAfterMs });
    }
    const load = loadOf(target);
    load.queued++;
    // `acquire` never rejects.
    const slot = await limiterFor(target, url.origin).acquire(input.account, signal, stopping);
    load.queued--;
    if (!slot.ok) {
      if (signal?.aborted) throw signal.reason;
      if (slot.cause === 'aborted')
        return fail({ reason: 'shutdown', target, operation, maybeDelivered: false });
      const { cause, retryAfterMs } = slot;
      return fail({ reason: 'overloaded', target, operation, maybeDelivered: false, cause, retryAfterMs });
    }
    load.active++;
    try {
      const admission = breaker.admit();
      if (!admission.allowed) {
        const { retryAfterMs } = admission;
        return fail({ reason: 'circuit_open', target, operation, maybeDelivered: false, retryAfterMs });
      }
      let outcome: RawOutcome;
      try {
        const limits = { maxBytes: config.maxResponseBytes, totalTimeoutMs: config.totalTimeoutMs };
        outcome = await send(url, contentType, authorization, input.body, limits, signal);
      } catch (abortReason) {
        breaker.record(admission, 'abandoned');
        throw abortReason;
      }
      const result =
        outcome.kind === 'response'
          ? interpretResponse(outcome, decode, context)
          : { ok: false as const, error: failureToError(outcome, context, config) };
      // A call our own shutdown stopped tells nothing about the wholesaler.
      if (outcome.kind === 'stopped') breaker.record(admission, 'abandoned');
      else if (result.ok) breaker.record(admission, 'success');
      else breaker.record(admission, signalsOutage(result.error) ? 'failure' : 'success', result.error);
      return withLatency(result, performance.now() - started);
    } finally {
      load.active--;
      slot.release();
    }
  }

  async function probe(input: ProbeInput): Promise<ProbeResult> {
    const started = performance.now();
    const url = remembered(endpoints, input.url, parseEndpoint);
    const limits = { maxBytes: PROBE_MAX_BYTES, totalTimeoutMs: config.probeTimeoutMs };
    const contentType = remembered(contentTypes, input.request.action, soapContentType);
    const outcome = await send(url, contentType, undefined, input.request.body, limits);
    const context: CallContext = { target: input.target, operation: 'probe', secrets: [], clock };
    return { ...interpretProbe(outcome, context, config), latencyMs: performance.now() - started };
  }

  return {
    call,
    probe,
    breakerState: (target) =>
      breakers.get(target)?.snapshot() ?? { state: 'closed', consecutiveFailures: 0, retryAfterMs: 0 },
    usage: () =>
      [...breakers].map(([target, breaker]) => ({
        target,
        active: loads.get(target)?.active ?? 0,
        queued: loads.get(target)?.queued ?? 0,
        breaker: breaker.snapshot(),
      })),
    async close() {
      closed = true;
      await Promise.all([...dispatchers.values()].map((dispatcher) => dispatcher.close()));
      dispatchers.clear();
    },
  };
}

/** Where a service URL's requests go: its origin and its path with query. */
interface Endpoint {
  origin: string;
  path: string;
}

const MAX_REMEMBERED = 1_000;

/**
 * `compute(key)`, remembered in `map` (at most MAX_REMEMBERED entries): a transport's few service URLs
 * and SOAP actions are checked once, not on every call. A key that throws is not remembered.
 */
function remembered<T>(map: Map<string, T>, key: string, compute: (key: string) => T): T {
  let value = map.get(key);
  if (value === undefined) {
    value = compute(key);
    if (map.size >= MAX_REMEMBERED) map.clear();
    map.set(key, value);
  }
  return value;
}

function parseEndpoint(raw: string): Endpoint {
  const url = checkEndpoint(raw);
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
}

function checkEndpoint(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not the URL itself in the message: it could carry credentials.
    throw new TypeError('invalid wholesaler URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError('wholesaler URL must be http(s)');
  if (url.username || url.password) throw new TypeError('wholesaler URL must not contain credentials');
  return url;
}

function soapContentType(action: string): string {
  if (/["\\\p{Cc}]/u.test(action))
    throw new TypeError('SOAP action must not contain quotes or control characters');
  return `application/soap+xml; charset=utf-8; action="${action}"`;
}

function defaultUserAgent(): string {
  try {
    // ../../package.json is the project root from both src/msv3/ and dist/msv3/.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ? `msv3-gateway/${pkg.version}` : 'msv3-gateway';
  } catch {
    return 'msv3-gateway';
  }
}
