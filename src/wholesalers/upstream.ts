import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { VERSION } from '../http/version.js';
import { isAllowedAddress } from '../lib/address-policy.js';
import { type Clock, systemClock } from '../lib/clock.js';
import { createMsv3Client, type Msv3Client } from '../msv3/client.js';
import {
  type BreakerChange,
  type BreakerSnapshot,
  createTransport,
  DEFAULT_TRANSPORT_OPTIONS,
  type ProbeResult,
  type Transport,
  type TransportOptions,
} from '../msv3/transport.js';
import type { Tracing } from '../observability/tracing.js';
import type { UpstreamDeps } from '../services/wholesaler-call.js';
import type { Tables } from '../store/schema.js';
import type { CatalogueEntry } from './catalogue.js';
import { createEndpointUsage, type EndpointInUse, type EndpointUsage } from './endpoint-usage.js';
import { createWholesalerRegistry, isCustomTarget, isSandboxTarget } from './registry.js';

/**
 * Builds what services need to reach wholesalers (`UpstreamDeps`) from the configuration: the registry
 * over the catalogue and the database, and two transports. Catalogue wholesalers and the sandbox are
 * operator-trusted and may sit on any address; customer-registered endpoints go through a second
 * transport whose connections refuse private, loopback and link-local addresses unless
 * ALLOW_PRIVATE_ENDPOINTS (checked on the address actually connected to). Every call notes its endpoint,
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
  onBreakerChange?: (change: BreakerChange) => void;
  /** The gateway's shutdown: stops both transports' calls and probes in flight (`TransportDeps.stop`). */
  stop?: AbortSignal;
  /** A span per wholesaler call (`UpstreamDeps.tracing`); default none. */
  tracing?: Tracing;
}

export interface Upstream {
  deps: UpstreamDeps;
  /** Endpoints called in the last hour (`IN_USE_WINDOW_MS`): what the status monitor probes. */
  endpointsInUse(): EndpointInUse[];
  /** Credential-free probe through the transport the target's calls use (custom: address-restricted). */
  probe(input: { target: string; url: string }): Promise<ProbeResult>;
  /** The circuit breaker of a target, in the transport its calls use. */
  breakerState(target: string): BreakerSnapshot;
  /** Waits for calls in flight, then closes every connection. */
  close(): Promise<void>;
}

export function defaultClientSoftwareId(): string {
  return `msv3-gateway ${VERSION}`;
}

export function transportOptionsFrom(config: Config): Partial<TransportOptions> {
  const u = config.upstream;
  return {
    connectTimeoutMs: u.connectTimeoutMs,
    headersTimeoutMs: u.headersTimeoutMs,
    bodyTimeoutMs: u.bodyTimeoutMs,
    // A safety net over the phase timeouts, never shorter than the default.
    totalTimeoutMs: Math.max(
      DEFAULT_TRANSPORT_OPTIONS.totalTimeoutMs,
      u.connectTimeoutMs + u.headersTimeoutMs + u.bodyTimeoutMs,
    ),
    maxResponseBytes: u.maxResponseBytes,
    connectionsPerOrigin: u.maxConcurrency,
    maxConcurrentPerTarget: u.maxConcurrency,
    breakerFailureThreshold: u.breakerFailureThreshold,
    breakerCoolDownMs: u.breakerCooldownMs,
  };
}

export function createUpstream(options: UpstreamOptions): Upstream {
  const { config } = options;
  const transportDeps = {
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.onBreakerChange === undefined ? {} : { onBreakerChange: options.onBreakerChange }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
  };
  // Every test account's sandbox calls go to one origin: its targets (one per account, each capped at
  // UPSTREAM_MAX_CONCURRENCY) share no pool limit, so one account's slow scenario calls cannot hold the
  // connections another account's calls wait for.
  const sandboxOrigin = () => originOf(options.sandboxUrl());
  const trusted = createTransport(
    {
      ...transportOptionsFrom(config),
      connectionsFor: (origin) => (origin === sandboxOrigin() ? null : undefined),
    },
    transportDeps,
  );
  const allowPrivate = config.network.allowPrivateEndpoints;
  const custom = createTransport(
    {
      ...transportOptionsFrom(config),
      addressPolicy: (address) => isAllowedAddress(address, { allowPrivate }),
    },
    transportDeps,
  );
  const transports: Transport[] = [trusted, custom];
  // Registry targets of customer-registered endpoints start with `custom/` (sandbox targets name an
  // account too, `sandbox/<account>/<id>`, but the sandbox is operator-trusted).
  const transportOf = (target: string) => (isCustomTarget(target) ? custom : trusted);
  // The sandbox has one target and one tenant URL per account, so the monitor's round holds one endpoint
  // per account that used it: probes of the sandbox server in flight at once share one request (whatever
  // the tenant path; one server answers them all), as do probes of one URL through one transport.
  const probing = new Map<string, Promise<ProbeResult>>();
  function probe(input: { target: string; url: string }): Promise<ProbeResult> {
    const transport = transportOf(input.target);
    const key = isSandboxTarget(input.target)
      ? `sandbox ${originOf(input.url)}`
      : `${transport === trusted ? 'trusted' : 'custom'} ${input.url}`;
    let shared = probing.get(key);
    if (shared === undefined) {
      shared = transport.probe(input).finally(() => probing.delete(key));
      probing.set(key, shared);
    }
    return shared.then((result) =>
      result.error === undefined || result.error.target === input.target
        ? result
        : { ...result, error: { ...result.error, target: input.target } },
    );
  }
  const usage = createEndpointUsage({ clock: options.clock ?? systemClock });
  return {
    deps: {
      registry: createWholesalerRegistry({
        db: options.db,
        catalogue: options.catalogue,
        sandboxUrl: options.sandboxUrl,
      }),
      client: recordingUse(createMsv3Client(trusted), usage),
      customClient: recordingUse(createMsv3Client(custom), usage),
      clientSoftwareId: config.wholesalers.clientSoftwareId ?? defaultClientSoftwareId(),
      ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
    },
    endpointsInUse: () => usage.inUse(),
    probe,
    breakerState: (target) => transportOf(target).breakerState(target),
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

function recordingUse(client: Msv3Client, usage: EndpointUsage): Msv3Client {
  return {
    supports: client.supports,
    call(operation, endpoint, credentials, request, signal) {
      usage.record(endpoint);
      return client.call(operation, endpoint, credentials, request, signal);
    },
  };
}
