import type { FastifyRequest } from 'fastify';
import { extend } from '../lib/extend.js';
import type { UpstreamDeps, WholesalerCallNote } from '../wholesalers/call.js';
import type { GatewayApp } from './types.js';

/**
 * What a request's log line says beyond method, route and status (docs/observability.md "Logs"): the
 * error kind it was answered with and the wholesaler calls it made. Collected while the request runs,
 * written once by `installObservation`.
 */
interface RequestNotes {
  errorKind?: string;
  calls: WholesalerCallNote[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Null until something is noted. */
    notes: RequestNotes | null;
  }
}

/**
 * More calls than this in one request are not listed. The most a route makes is 25: a split order over
 * 5 wholesalers asks each for availability, and an order whose answers are lost takes up to four calls
 * (bestellen, a status query, bestellen again, a status query; services/orders/placement.ts).
 */
const MAX_NOTED_CALLS = 32;

export function installRequestNotes(app: GatewayApp): void {
  app.decorateRequest('notes', null);
}

function notesOf(request: FastifyRequest): RequestNotes {
  request.notes ??= { calls: [] };
  return request.notes;
}

export function noteErrorKind(request: FastifyRequest, kind: string): void {
  notesOf(request).errorKind = kind;
}

/** `upstream` for one request's services: its calls are noted for the request's log line. */
export function upstreamFor(request: FastifyRequest, upstream: UpstreamDeps): UpstreamDeps {
  return extend(upstream, {
    noteCall(note: WholesalerCallNote) {
      const { calls } = notesOf(request);
      if (calls.length < MAX_NOTED_CALLS) calls.push(note);
    },
  });
}

/** A service's dependencies for one request: its wholesaler calls are noted for the request's log line. */
export function withCallNotes<T extends { upstream: UpstreamDeps }>(request: FastifyRequest, deps: T): T {
  return extend(deps, { upstream: upstreamFor(request, deps.upstream) }) as T;
}

/**
 * The log fields of the calls: the wholesalers (each once, in the order their calls ended), the
 * operations in order, their time, the first failure.
 */
export function callLogFields(calls: readonly WholesalerCallNote[]): Record<string, string | number> {
  if (calls.length === 0) return {};
  let upstreamMs = 0;
  for (const call of calls) upstreamMs += call.latencyMs;
  return {
    wholesaler: [...new Set(calls.map((call) => call.wholesaler))].join(','),
    msv3_operation: calls.map((call) => call.operation).join(','),
    upstream_ms: Math.round(upstreamMs * 10) / 10,
    upstream_outcome: calls.find((call) => call.outcome !== 'ok')?.outcome ?? 'ok',
  };
}
