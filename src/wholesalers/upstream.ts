import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { VERSION } from '../core/version.js';
import { type AddressPolicy, createAddressPolicy, type HostLookup } from '../lib/address-policy.js';
import { type Clock, systemClock } from '../lib/clock.js';
import { extend } from '../lib/extend.js';
import { createMsv3Client, type Msv3Client } from '../msv3/client.js';
import type { Msv3Version } from '../msv3/envelope.js';
import { probeRequest } from '../msv3/probe-request.js';
import {
  type BreakerChange,
  type BreakerSnapshot,
  type CallResult,
  createTransport,
  type ProbeResult,
  type Transport,
  type TransportOptions,
} from '../msv3/transport.js';
import type { Tracing } from '../observability/tracing.js';
import type { WholesalerLabels, WholesalerMetrics } from '../observability/wholesaler-metrics.js';
import type { Tables } from '../store/schema.js';
import type { AnswerDeviations } from './answer-deviations.js';
import type { UpstreamDeps } from './call.js';
import type { CatalogueEntry } from './catalogue.js';
import { createWholesalerRegistry, TEST_SUFFIX } from './registry.js';
import { createEndpointUsage, type EndpointInUse, type EndpointUsage } from './status/endpoint-usage.js';
import { createTargetDirectory, type Target, type TargetDirectory } from './target.js';
import { upstreamErrorKind } from './upstream-errors.js';

/**
 * Builds what services need to reach wholesalers (`UpstreamDeps`) from the configuration: the registry
 * over the catalogue and the database, and two transports. Catalogue wholesalers and the sandbox are
 * operator-trusted and may sit on any address; customer-registered endpoints go through a second
 * transport whose connections go through the guarded connector and the outbound address policy
 * (docs/security.md; checked on the address actually connected to). Every call notes its endpoint,
 * so the status monitor can probe the endpoints in use through the same transport.
 */

export interface UpstreamOptions {
  config: Config;
  db: Kysely<Tables>;
  catalogue: readonly CatalogueEntry[];
  /** Base URL of the sandbox mock (known once it listens). */
  sandboxUrl: () => string;
  clock?: Clock;
  /** Breaker transitions of both transports (the wholesaler status feed). */
  onBreakerChange?: (change: BreakerChange & { about: Target }) => void;
  /** The gateway's one outbound address policy; built from `config.network` when not given. */
  addressPolicy?: AddressPolicy;
  /** Host name resolution for custom endpoints (tests; DNS otherwise). */
  lookup?: HostLookup;
  /** The gateway's shutdown: stops both transports' calls and probes in flight (`TransportDeps.stop`). */
  stop?: AbortSignal;
  /** A span per wholesaler call (`UpstreamDeps.tracing`); default none. */
  tracing?: Tracing;
  /** Counts every call, probe and circuit opening, and reads the transports' load at scrape time. */
  metrics?: WholesalerMetrics;
  /**
   * Where the tolerated schema deviations of answers go (MSV3_TOLERATE_DEVIATIONS); without it they
   * are accepted unrecorded.
   */
  deviations?: AnswerDeviations;
}

/** An endpoint in use (`EndpointInUse`) as a probe needs it. */
interface UpstreamProbeInput {
  /** Its target's key. */
  target: string;
  /** Customer-registered: probed through the address-restricted transport, as its calls are. */
  custom: boolean;
  url: string;
  version: Msv3Version;
}

export interface Upstream {
  deps: UpstreamDeps;
  /** Endpoints called in the last hour (`IN_USE_WINDOW_MS`): what the status monitor probes. */
  endpointsInUse(): EndpointInUse[];
  /**
   * Credential-free probe through the transport the target's calls use (custom: address-restricted): a
   * `verbindungTesten` request of the endpoint's version without credentials (`probeRequest`).
   */
  probe(input: UpstreamProbeInput): Promise<ProbeResult>;
  /** The circuit breaker of a target, in the transport its calls use. */
  breakerState(endpoint: { target: string; custom: boolean }): BreakerSnapshot;
  /** Waits for calls in flight, then closes every connection. */
  close(): Promise<void>;
}

export function defaultClientSoftwareId(): string {
  return `msv3-gateway ${VERSION}`;
}

function transportOptionsFrom(config: Config): Partial<TransportOptions> {
  const u = config.upstream;
  return {
    connectTimeoutMs: u.connectTimeoutMs,
    headersTimeoutMs: u.headersTimeoutMs,
    bodyTimeoutMs: u.bodyTimeoutMs,
    // The deadline over the phase timeouts (a trickling answer never trips the body timeout).
    totalTimeoutMs: u.totalTimeoutMs,
    maxResponseBytes: u.maxResponseBytes,
    connectionsPerOrigin: u.maxConcurrency,
    maxConcurrentPerTarget: u.maxConcurrency,
    maxQueuePerTarget: u.maxQueue,
    maxQueueWaitMs: u.maxQueueWaitMs,
    maxRefusalHoldMs: u.maxRefusalHoldMs,
    breakerFailureThreshold: u.breakerFailureThreshold,
    breakerCoolDownMs: u.breakerCooldownMs,
  };
}

export function createUpstream(options: UpstreamOptions): Upstream {
  const { config, metrics } = options;
  const targets = createTargetDirectory();
  const labelsOf = metricLabeller(options.catalogue);
  const onBreakerChange = options.onBreakerChange;
  const transportDeps = {
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(onBreakerChange === undefined && metrics === undefined
      ? {}
      : {
          onBreakerChange: (change: BreakerChange) => {
            const about = targets.find(change.target);
            if (about === undefined) return;
            if (change.to === 'open') metrics?.circuitOpened(labelsOf(about));
            onBreakerChange?.({ ...change, about });
          },
        }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
  };
  // Every test account's sandbox calls go to one origin: its targets (one per account, each capped at
  // UPSTREAM_MAX_CONCURRENCY) share no pool limit, so one account's slow scenario calls cannot hold the
  // connections another account's calls wait for.
  const sandboxOrigin = lastOriginOf(options.sandboxUrl);
  const trusted = createTransport(
    {
      ...transportOptionsFrom(config),
      connectionsFor: (origin) => (origin === sandboxOrigin() ? null : undefined),
    },
    transportDeps,
  );
  const custom = createTransport(
    {
      ...transportOptionsFrom(config),
      addressPolicy: options.addressPolicy ?? createAddressPolicy(config.network),
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    },
    transportDeps,
  );
  const transports: Transport[] = [trusted, custom];
  const transportOf = (endpoint: { custom: boolean }) => (endpoint.custom ? custom : trusted);
  // Probes of one URL through one transport in flight at once share one request. The sandbox has one
  // tenant URL per account, and each is probed on its own: a test helper can take one account's sandbox
  // wholesaler down (docs/sandbox.md "Test helpers") while the same server answers every other tenant.
  const probing = new Map<string, Promise<ProbeResult>>();
  const clientSoftwareId = config.wholesalers.clientSoftwareId ?? defaultClientSoftwareId();
  function probe(input: UpstreamProbeInput): Promise<ProbeResult> {
    const transport = transportOf(input);
    const key = `${transport === trusted ? 'trusted' : 'custom'} v${input.version} ${input.url}`;
    let shared = probing.get(key);
    if (shared === undefined) {
      const request = probeRequest(input.version, clientSoftwareId);
      shared = transport
        .probe({ target: input.target, url: input.url, request })
        .finally(() => probing.delete(key));
      probing.set(key, shared);
    }
    return shared.then((result) => {
      const about = targets.find(input.target);
      // Stopped by the gateway's own shutdown: that tells nothing about the wholesaler.
      if (metrics !== undefined && about !== undefined && result.error?.reason !== 'shutdown')
        metrics.probe({
          ...labelsOf(about),
          up: result.up,
          reason: probeReason(result),
          latencyMs: result.latencyMs,
        });
      return result.error === undefined || result.error.target === input.target
        ? result
        : { ...result, error: { ...result.error, target: input.target } };
    });
  }
  metrics?.watch(function* () {
    for (const transport of transports) {
      for (const usage of transport.usage()) {
        const about = targets.find(usage.target);
        if (about === undefined) continue;
        yield {
          ...labelsOf(about),
          active: usage.active,
          queued: usage.queued,
          circuit: usage.breaker.state,
        };
      }
    }
  });
  const usage = createEndpointUsage({ clock: options.clock ?? systemClock });
  const observer: CallObserver | undefined =
    metrics === undefined
      ? undefined
      : (target, operation, result) => metrics.call(callObservation(labelsOf(target), operation, result));
  const clientOptions = {
    plainDecoding: config.fastPaths.decoding,
    tolerateDeviations: config.wholesalers.tolerateDeviations,
  };
  const { deviations } = options;
  const clientOf = (transport: Transport) => {
    const client = recordingUse(createMsv3Client(transport, clientOptions), usage, targets, observer);
    return deviations === undefined
      ? client
      : recordingDeviations(client, deviations, targets, (target) => labelsOf(target).wholesaler);
  };
  return {
    deps: {
      registry: createWholesalerRegistry({
        db: options.db,
        catalogue: options.catalogue,
        sandboxUrl: options.sandboxUrl,
        targets,
      }),
      client: clientOf(trusted),
      customClient: clientOf(custom),
      clientSoftwareId,
      ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
      ...(deviations === undefined ? {} : { deviations }),
    },
    endpointsInUse: () => usage.inUse(),
    probe,
    breakerState: (endpoint) => transportOf(endpoint).breakerState(endpoint.target),
    close: async () => {
      await Promise.all(transports.map((t) => t.close()));
    },
  };
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * The origin of the URL `url()` gives now, parsed again only when that URL changes: the transport asks
 * for it on every call (a `new URL` per request otherwise).
 */
function lastOriginOf(url: () => string): () => string | undefined {
  let lastUrl: string | undefined;
  let origin: string | undefined;
  return () => {
    const now = url();
    if (now !== lastUrl) {
      lastUrl = now;
      origin = originOf(now);
    }
    return origin;
  };
}

type CallObserver = (target: Target, operation: string, result: CallResult<unknown> | 'aborted') => void;

/** Notes each call's endpoint as in use and, with metrics, its outcome. */
function recordingUse(
  client: Msv3Client,
  usage: EndpointUsage,
  targets: TargetDirectory,
  observe: CallObserver | undefined,
): Msv3Client {
  return {
    call(operation, endpoint, credentials, request, signal) {
      const target = targets.find(endpoint.target);
      if (target !== undefined) usage.record(endpoint, target);
      const call = client.call(operation, endpoint, credentials, request, signal);
      if (observe === undefined || target === undefined) return call;
      return call.then(
        (result) => {
          observe(target, operation.name, result);
          return result;
        },
        (error: unknown) => {
          // The caller gave up (its signal): the call ended without an outcome.
          observe(target, operation.name, 'aborted');
          throw error;
        },
      );
    },
  };
}

/**
 * The metric labels of a target: the catalogue id as clients use it (`phoenix`, `phoenix_test`) and the
 * route; every customer-registered wholesaler is `custom`, since their ids are per account and would
 * make the series count grow with the customers (docs/observability.md "Wholesaler metrics").
 */
function metricLabeller(catalogue: readonly CatalogueEntry[]): (target: Target) => WholesalerLabels {
  const ids = new Set(catalogue.map((entry) => entry.id));
  return (target) => {
    const base = target.wholesaler.endsWith(TEST_SUFFIX)
      ? target.wholesaler.slice(0, -TEST_SUFFIX.length)
      : target.wholesaler;
    return { wholesaler: ids.has(base) ? target.wholesaler : 'custom', route: target.route };
  };
}

function callObservation(
  labels: WholesalerLabels,
  operation: string,
  result: CallResult<unknown> | 'aborted',
) {
  if (result === 'aborted')
    return extend(labels, { operation, outcome: 'aborted', latencyMs: 0, sent: false });
  if (result.ok) return extend(labels, { operation, outcome: 'ok', latencyMs: result.latencyMs, sent: true });
  const { error } = result;
  const sent =
    error.reason !== 'circuit_open' &&
    error.reason !== 'overloaded' &&
    (error.reason !== 'shutdown' || error.maybeDelivered);
  return extend(labels, {
    operation,
    outcome: upstreamErrorKind(error),
    latencyMs: result.latencyMs,
    sent,
    ...(error.reason === 'timeout' ? { timeoutPhase: error.phase } : {}),
    ...(error.reason === 'overloaded' ? { refusalCause: error.cause } : {}),
  });
}

/** A probe's result in a few words, as the status page shows it. */
function probeReason(result: ProbeResult): string {
  if (result.up) return result.status === undefined ? 'answers' : `HTTP ${result.status}`;
  if (result.status !== undefined) return `HTTP ${result.status}`;
  const error = result.error;
  if (error === undefined) return 'no answer';
  const reason = error.reason.replaceAll('_', ' ');
  return error.reason === 'unreachable' ? `${reason}: ${error.code}` : reason;
}

/**
 * Hands the tolerated deviations of every successful call's answer to `deviations`, with the target's
 * metric label (`labelOf`, as the call metrics label it).
 */
function recordingDeviations(
  client: Msv3Client,
  deviations: AnswerDeviations,
  targets: TargetDirectory,
  labelOf: (target: Target) => string,
): Msv3Client {
  return {
    async call(operation, endpoint, credentials, request, signal) {
      const result = await client.call(operation, endpoint, credentials, request, signal);
      if (result.ok && result.deviations !== undefined) {
        const target = targets.find(endpoint.target);
        if (target !== undefined) {
          const about = { key: endpoint.target, target, label: labelOf(target) };
          deviations.record(about, operation.name, result.deviations);
        }
      }
      return result;
    },
  };
}
