import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { VERSION } from '../http/version.js';
import { isAllowedAddress } from '../lib/address-policy.js';
import type { Clock } from '../lib/clock.js';
import { createMsv3Client } from '../msv3/client.js';
import {
  type BreakerChange,
  createTransport,
  DEFAULT_TRANSPORT_OPTIONS,
  type Transport,
  type TransportOptions,
} from '../msv3/transport.js';
import type { UpstreamDeps } from '../services/wholesaler-call.js';
import type { Tables } from '../store/schema.js';
import type { CatalogueEntry } from './catalogue.js';
import { createWholesalerRegistry } from './registry.js';

/**
 * Builds what services need to reach wholesalers (`UpstreamDeps`) from the configuration: the registry
 * over the catalogue and the database, and two transports. Catalogue wholesalers and the sandbox are
 * operator-trusted and may sit on any address; customer-registered endpoints go through a second
 * transport whose connections refuse private, loopback and link-local addresses unless
 * ALLOW_PRIVATE_ENDPOINTS (checked on the address actually connected to).
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
}

export interface Upstream {
  deps: UpstreamDeps;
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
  };
  const trusted = createTransport(transportOptionsFrom(config), transportDeps);
  const allowPrivate = config.network.allowPrivateEndpoints;
  const custom = createTransport(
    {
      ...transportOptionsFrom(config),
      addressPolicy: (address) => isAllowedAddress(address, { allowPrivate }),
    },
    transportDeps,
  );
  const transports: Transport[] = [trusted, custom];
  return {
    deps: {
      registry: createWholesalerRegistry({
        db: options.db,
        catalogue: options.catalogue,
        sandboxUrl: options.sandboxUrl,
      }),
      client: createMsv3Client(trusted),
      customClient: createMsv3Client(custom),
      clientSoftwareId: config.wholesalers.clientSoftwareId ?? defaultClientSoftwareId(),
    },
    close: async () => {
      await Promise.all(transports.map((t) => t.close()));
    },
  };
}
