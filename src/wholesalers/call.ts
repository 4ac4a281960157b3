import { ApiError } from '../core/errors.js';
import type { Msv3Client } from '../msv3/client.js';
import type { Credentials } from '../msv3/credentials.js';
import type { Msv3Operation } from '../msv3/operations/operation.js';
import type { CallResult } from '../msv3/transport.js';
import type { Tracing } from '../observability/tracing.js';
import type { AnswerDeviations } from './answer-deviations.js';
import { inCallSpan } from './call-span.js';
import type { ResolvedWholesaler, WholesalerRegistry } from './registry.js';
import { apiErrorFromUpstream, upstreamErrorKind } from './upstream-errors.js';

/** What services need to reach wholesalers. */
export interface UpstreamDeps {
  registry: WholesalerRegistry;
  /** For catalogue wholesalers and the sandbox (operator-trusted addresses). */
  client: Msv3Client;
  /** For customer-registered endpoints: refuses private addresses unless ALLOW_PRIVATE_ENDPOINTS. */
  customClient: Msv3Client;
  /** `clientSoftwareKennung` sent with every request (1–80 characters). */
  clientSoftwareId: string;
  /** A span per call (docs/tracing.md); absent or `NO_TRACING`: calls are not wrapped at all. */
  tracing?: Tracing;
  /** Told of every call made with these deps: the request's log line names them (docs/observability.md). */
  noteCall?: (note: WholesalerCallNote) => void;
  /** The tolerated schema deviations seen per target (the connection test lists them). */
  deviations?: AnswerDeviations;
}

/** One wholesaler call, as a request's log line names it: no credentials, URLs or request contents. */
export interface WholesalerCallNote {
  /** The id the client used. */
  wholesaler: string;
  operation: string;
  latencyMs: number;
  /** `ok` or the error kind the failure maps to. */
  outcome: string;
}

function clientFor(deps: UpstreamDeps, wholesaler: ResolvedWholesaler): Msv3Client {
  return wholesaler.custom !== null && wholesaler.route !== 'sandbox' ? deps.customClient : deps.client;
}

/** Throws 422 `operation_not_supported` when the wholesaler's MSV3 version lacks the operation. */
export function assertSupports(
  wholesaler: ResolvedWholesaler,
  operation: Msv3Operation<unknown, unknown>,
): void {
  if (!operation.versions.includes(wholesaler.version)) {
    throw new ApiError(
      'operation_not_supported',
      `${wholesaler.id} speaks MSV3 version ${wholesaler.version}, which has no ${operation.name} ` +
        '(delivery notices, returns and documents need version 2).',
      { wholesaler: wholesaler.id },
    );
  }
}

/**
 * One call, with the raw outcome (the order service needs `maybeDelivered` to reconcile). Every
 * service's wholesaler call passes here, so this is where its trace span is opened. Aborting `signal`
 * (a caller's deadline, e.g. comparing wholesalers) ends the call at once, its connection included, and
 * rejects with `signal.reason`; the request's log line notes it as `abandoned`.
 */
export async function callWholesalerRaw<Req, Res>(
  deps: UpstreamDeps,
  wholesaler: ResolvedWholesaler,
  operation: Msv3Operation<Req, Res>,
  credentials: Credentials,
  request: Req,
  signal?: AbortSignal,
): Promise<CallResult<Res>> {
  assertSupports(wholesaler, operation as Msv3Operation<unknown, unknown>);
  // Checked above, so the client's own version check (UnsupportedOperationError) cannot fire here.
  const call = () =>
    clientFor(deps, wholesaler).call(operation, wholesaler.endpoint, credentials, request, signal);
  const started = performance.now();
  let result: CallResult<Res>;
  try {
    result = await (deps.tracing?.enabled
      ? inCallSpan(deps.tracing, wholesaler, operation.name, call)
      : call());
  } catch (error) {
    if (signal?.aborted) {
      const latencyMs = performance.now() - started;
      deps.noteCall?.({
        wholesaler: wholesaler.id,
        operation: operation.name,
        latencyMs,
        outcome: 'abandoned',
      });
    }
    throw error;
  }
  deps.noteCall?.({
    wholesaler: wholesaler.id,
    operation: operation.name,
    latencyMs: result.latencyMs,
    outcome: result.ok ? 'ok' : upstreamErrorKind(result.error),
  });
  return result;
}

/** One call; any failure becomes the matching ApiError. */
export async function callWholesaler<Req, Res>(
  deps: UpstreamDeps,
  wholesaler: ResolvedWholesaler,
  operation: Msv3Operation<Req, Res>,
  credentials: Credentials,
  request: Req,
  signal?: AbortSignal,
): Promise<{ value: Res; latencyMs: number }> {
  const result = await callWholesalerRaw(deps, wholesaler, operation, credentials, request, signal);
  if (!result.ok) throw apiErrorFromUpstream(result.error, wholesaler.id);
  return { value: result.value, latencyMs: result.latencyMs };
}
