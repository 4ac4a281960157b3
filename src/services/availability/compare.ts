import type { Tenant } from '../../core/caller.js';
import {
  type ApiError,
  ERROR_CATALOGUE,
  type ErrorBody,
  type ErrorKind,
  isApiError,
} from '../../core/errors.js';
import type { Credentials } from '../../msv3/credentials.js';
import type { UpstreamDeps } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { distinctWholesalers } from '../wholesaler-preference.js';
import { deliverable } from './deliverable.js';
import { type Offer, type Recommendation, recommend } from './recommend.js';
import { type AvailabilityInput, type AvailabilityItem, availabilityAt, uniquePzns } from './single.js';

/**
 * POST /v1/availability/compare (docs/multi-wholesaler.md "Compare availability"): one availability
 * question to up to 10 wholesalers at once, each asked as POST /v1/availability asks it (`availabilityAt`:
 * the same codec, concurrency cap, circuit, metrics and span per call), all in parallel under one
 * deadline.
 *
 * - The request is refused as a whole (400/404) for what the caller can fix before anything is sent: a
 *   repeated wholesaler or PZN, an unknown wholesaler id, a missing login. What happens at a wholesaler
 *   (its fault, its timeout, its open circuit, a v1 wholesaler's quantity limit) is that wholesaler's entry;
 *   the others answer as usual.
 * - At the deadline every call still open is aborted (its connection closed) and its entry says
 *   `timeout`: the answer never waits longer for a hung wholesaler.
 * - Per item, a recommendation (recommend.ts) from what each wholesaler that answered delivers.
 */

export const COMPARE_DEADLINE = { defaultMs: 5_000, minMs: 100, maxMs: 30_000 } as const;

export interface CompareInput {
  /** In the caller's preference order: the first is the main wholesaler. */
  wholesalers: string[];
  items: AvailabilityInput['items'];
  deadline_ms?: number;
}

interface WholesalerError {
  kind: ErrorKind;
  error_code: string;
  message: string;
  /** Seconds, where retrying later helps (the Retry-After a single call would carry). */
  retry_after: number | null;
  upstream: NonNullable<ErrorBody['upstream']> | null;
}

interface WholesalerAnswer {
  wholesaler: string;
  status: 'ok' | 'error' | 'timeout';
  elapsed_ms: number;
  answer: { response_type: 'standard' | 'unspecific' | null; items: AvailabilityItem[] } | null;
  error: WholesalerError | null;
}

interface ComparedItem {
  pzn: string;
  quantity_requested: number;
  recommendation: Recommendation;
  /** What each wholesaler that answered delivers, in preference order. */
  offers: { wholesaler: string; units: number; estimated_at: string | null }[];
}

export interface CompareResult {
  deadline_ms: number;
  wholesalers: WholesalerAnswer[];
  items: ComparedItem[];
}

/** The abort reason at the deadline: the call is given up, the wholesaler is not blamed. */
class DeadlineReached extends Error {
  override readonly name = 'DeadlineReached';
}

export async function compareAvailability(
  deps: UpstreamDeps,
  tenant: Tenant,
  credentials: ReadonlyMap<string, Credentials>,
  input: CompareInput,
): Promise<CompareResult> {
  distinctWholesalers(input.wholesalers);
  const pzns = uniquePzns(
    input.items.map((item) => item.pzn),
    'items',
    '.pzn',
    null,
  );
  const deadlineMs = input.deadline_ms ?? COMPARE_DEADLINE.defaultMs;
  // Unknown ids are refused before any wholesaler is asked: a typo is the caller's to fix.
  const resolved = await Promise.all(input.wholesalers.map((id) => deps.registry.resolve(tenant, id)));

  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      stop.abort(new DeadlineReached(`deadline of ${deadlineMs} ms`));
      resolve();
    }, deadlineMs);
  });
  try {
    const answers = await Promise.all(
      resolved.map((wholesaler) =>
        ask(deps, wholesaler, credentials, { ...input, wholesaler: wholesaler.id }, pzns, {
          signal: stop.signal,
          deadline,
          deadlineMs,
        }),
      ),
    );
    return { deadline_ms: deadlineMs, wholesalers: answers, items: compareItems(input, pzns, answers) };
  } finally {
    clearTimeout(timer);
  }
}

async function ask(
  deps: UpstreamDeps,
  wholesaler: ResolvedWholesaler,
  credentials: ReadonlyMap<string, Credentials>,
  input: AvailabilityInput,
  pzns: readonly string[],
  limit: { signal: AbortSignal; deadline: Promise<void>; deadlineMs: number },
): Promise<WholesalerAnswer> {
  const started = performance.now();
  const login = credentials.get(wholesaler.id);
  if (login === undefined) throw new Error(`no credentials for ${wholesaler.id}`); // the route read them all
  const elapsed = () => Math.round(performance.now() - started);
  const call = availabilityAt(deps, wholesaler, login, input, pzns, limit.signal).then(
    (result): WholesalerAnswer => ({
      wholesaler: wholesaler.id,
      status: 'ok',
      elapsed_ms: elapsed(),
      answer: { response_type: result.response_type, items: result.items },
      error: null,
    }),
    (error: unknown): WholesalerAnswer => {
      if (error instanceof DeadlineReached) {
        return timedOut(wholesaler.id, limit.deadlineMs, elapsed());
      }
      if (!isApiError(error)) throw error;
      return failed(wholesaler.id, error, elapsed());
    },
  );
  // Whatever the call path does with the abort, the answer does not wait past the deadline.
  const atDeadline = limit.deadline.then(() => timedOut(wholesaler.id, limit.deadlineMs, elapsed()));
  return Promise.race([call, atDeadline]);
}

function timedOut(wholesaler: string, deadlineMs: number, elapsedMs: number): WholesalerAnswer {
  const kind = 'wholesaler_timeout';
  return {
    wholesaler,
    status: 'timeout',
    elapsed_ms: elapsedMs,
    answer: null,
    error: {
      kind,
      error_code: ERROR_CATALOGUE[kind].code,
      message: `${wholesaler} did not answer within the deadline of ${deadlineMs} ms; the call was stopped.`,
      retry_after: null,
      upstream: null,
    },
  };
}

function failed(wholesaler: string, error: ApiError, elapsedMs: number): WholesalerAnswer {
  return {
    wholesaler,
    // The call's own timeout (UPSTREAM_*_TIMEOUT_MS, below the deadline) is a timeout too.
    status: error.kind === 'wholesaler_timeout' ? 'timeout' : 'error',
    elapsed_ms: elapsedMs,
    answer: null,
    error: {
      kind: error.kind,
      error_code: ERROR_CATALOGUE[error.kind].code,
      message:
        error.kind === 'wholesaler_credentials_rejected'
          ? `The wholesaler ${wholesaler} rejected the MSV3 user name or password of its X-MSV3-Credentials member; your API key is fine.`
          : error.message,
      retry_after: error.options.retryAfter ?? null,
      upstream: error.options.upstream ?? null,
    },
  };
}

function compareItems(
  input: CompareInput,
  pzns: readonly string[],
  answers: readonly WholesalerAnswer[],
): ComparedItem[] {
  return pzns.map((pzn, i) => {
    const quantity = input.items[i]!.quantity;
    const offers: Offer[] = answers.map((entry) => {
      const item = entry.answer?.items[i];
      if (item === undefined) {
        return { wholesaler: entry.wholesaler, answered: false, timedOut: entry.status === 'timeout' };
      }
      const { units, earliest } = deliverable(item);
      return { wholesaler: entry.wholesaler, answered: true, units, earliest };
    });
    const invalid = answers.find((entry) => entry.answer !== null)?.answer?.items[i]?.invalid_pzn;
    const recommendation = recommend(quantity, offers);
    return {
      pzn,
      quantity_requested: quantity,
      recommendation:
        invalid == null ? recommendation : { ...recommendation, reason: `${invalid.message} Not asked.` },
      offers: offers.flatMap((offer) =>
        offer.answered
          ? [{ wholesaler: offer.wholesaler, units: offer.units, estimated_at: offer.earliest }]
          : [],
      ),
    };
  });
}
