import type { EventType } from '../../core/event-types.js';
import { parseRetryAfter } from '../../lib/retry-after.js';
import { deliveryHeaders } from '../sign.js';
import { newDeliveryId } from './record.js';

/**
 * `msv3-gateway listen` (docs/webhooks.md "Local forwarding"): follows the events feed (`GET /v1/events`) of
 * a gateway with an API key and POSTs each new event to a local receiver, signed as a webhook
 * subscription's deliveries are (`deliveryHeaders`), with a secret of its own. Nothing comes in to the
 * receiver from the gateway, so it may listen on localhost without ALLOW_PRIVATE_ENDPOINTS.
 *
 * Which events are new: the feed is newest first and its ids are random, so two events of the same
 * millisecond are not ordered by when they were written, and an event committed a moment late may carry
 * a time older than the newest one already read. Each poll therefore reads the feed from the top down to
 * `lookbackMs` before the newest event seen (`created_after`), and forwards, oldest first, the events it
 * has not seen yet; the ids seen within that window are remembered.
 */

export interface ListenOptions {
  /** The gateway's origin (and base path, if any), without `/v1/events`. */
  gatewayUrl: string;
  apiKey: string;
  /** The receiver; undefined: print each event's body on one line of stdout instead (`--print`). */
  forwardTo?: string;
  /** `whsec_…`: signs every forward. */
  secret: string;
  /** Stop once the events there are now (after `since`) are handled, instead of following the feed. */
  once?: boolean;
  /** Only these types; undefined: every type. */
  events?: readonly EventType[];
  wholesaler?: string;
  /** Replay the events after this one (feed order); undefined: only events newer than the start. */
  since?: string;
  intervalMs: number;
  userAgent: string;
}

export interface ListenDeps {
  fetch: typeof fetch;
  now(): number;
  /** Waits `ms` (a poll interval or a back-off), or less when `signal` aborts; never rejects. */
  pause(ms: number, signal: AbortSignal): Promise<void>;
  /** One line per forward (stdout). */
  print(line: string): void;
  /** Problems with the feed and other notes (stderr). */
  warn(line: string): void;
  /** Events per feed page; 100 (the most the feed gives) unless a test pages sooner. */
  pageSize?: number;
  /** How far before the newest event seen each poll reads again; see above. */
  lookbackMs?: number;
  /** Tries per event before moving on. */
  forwardTries?: number;
  /** Wait before the second try; doubled for each further one. */
  forwardBackoffMs?: number;
  /** One forward must be answered within this time. */
  forwardTimeoutMs?: number;
  /** One feed request must be answered within this time. */
  feedTimeoutMs?: number;
  /** The longest wait after feed failures in a row. */
  maxFeedBackoffMs?: number;
  /** With `once`: feed failures in a row before giving up (it would otherwise wait for the gateway forever). */
  onceFeedTries?: number;
}

/** An event as the feed lists it: the parsed body, and the body as webhooks send it. */
interface FeedEvent {
  id: string;
  type: string;
  createdAt: number;
  body: string;
}

const LOOKBACK_MS = 10_000;
const FORWARD_TRIES = 3;
const FORWARD_BACKOFF_MS = 500;
const FORWARD_TIMEOUT_MS = 10_000;
const FEED_TIMEOUT_MS = 30_000;
const MAX_FEED_BACKOFF_MS = 30_000;
const ONCE_FEED_TRIES = 3;

/** The feed answered something that waiting will not fix (a wrong key, an unknown --since event). */
class FatalFeedError extends Error {}

/** The feed failed in a way that may pass; wait `waitMs` (if known) and ask again. */
class PassingFeedError extends Error {
  constructor(
    message: string,
    readonly waitMs?: number,
  ) {
    super(message);
  }
}

/**
 * Follows the feed until `stop` aborts; resolves to the exit code: 0 when stopped, 1 when the feed
 * refused for good (the key, the filter or the --since event). Feed failures that may pass (429, 5xx,
 * the network) are printed and retried with backoff; only with `once` do they end it, after a few tries
 * in a row (exit code 1). With `once`, it returns after the events there are at the start: 0 when every
 * one was forwarded, 1 when the receiver refused one.
 */
export async function followEvents(
  options: ListenOptions,
  deps: ListenDeps,
  stop: AbortSignal,
): Promise<number> {
  const lookbackMs = deps.lookbackMs ?? LOOKBACK_MS;
  const feed = feedReader(options, deps, stop);
  const forward =
    options.forwardTo === undefined
      ? async (event: FeedEvent) => {
          deps.print(event.body);
          return true;
        }
      : forwarder({ ...options, forwardTo: options.forwardTo }, deps, stop);
  let refused = 0;
  /** Ids seen (forwarded, filtered out or older than the start), with their times, within the window. */
  const seen = new Map<string, number>();
  let newest: number | undefined;
  const see = (event: FeedEvent) => {
    seen.set(event.id, event.createdAt);
    if (newest === undefined || event.createdAt > newest) newest = event.createdAt;
  };
  const wanted = (event: FeedEvent) =>
    options.events === undefined || (options.events as readonly string[]).includes(event.type);

  let failures = 0;
  /** Runs `work` until it succeeds or the listener stops; false if it stopped (or failed for good). */
  const persist = async (work: () => Promise<void>): Promise<boolean> => {
    for (;;) {
      if (stop.aborted) return false;
      try {
        await work();
        failures = 0;
        return true;
      } catch (error) {
        if (stop.aborted) return false;
        if (!(error instanceof PassingFeedError)) throw error;
        failures += 1;
        const tries = deps.onceFeedTries ?? ONCE_FEED_TRIES;
        if (options.once && failures >= tries) {
          // A one-off run (a script, a test) must end: most often the gateway is elsewhere or not started.
          throw new FatalFeedError(
            `events feed: ${error.message}; gave up after ${tries} tries (--once). Is the gateway at ${options.gatewayUrl}? Give its URL with --url (or MSV3_GATEWAY_URL).`,
          );
        }
        const backoff = Math.min(
          options.intervalMs * 2 ** (failures - 1),
          deps.maxFeedBackoffMs ?? MAX_FEED_BACKOFF_MS,
        );
        const waitMs = error.waitMs ?? backoff;
        deps.warn(`${stamp(deps)}  events feed: ${error.message}; asking again in ${seconds(waitMs)}`);
        await deps.pause(waitMs, stop);
      }
    }
  };

  try {
    // The start: every event up to now counts as seen, except those after --since.
    let pending: FeedEvent[] = [];
    const started = await persist(async () => {
      pending = [];
      seen.clear();
      newest = undefined;
      if (options.since !== undefined) {
        const cursor = await feed.one(options.since);
        for (const event of await feed.collect(cursor.createdAt - lookbackMs)) {
          if (isAfter(event, cursor)) pending.push(event);
          else see(event);
        }
      } else {
        const top = (await feed.page(undefined, undefined, 1)).events[0];
        if (top !== undefined) for (const event of await feed.collect(top.createdAt - lookbackMs)) see(event);
      }
    });
    if (!started) return stopped(deps);
    if (options.once) {
      deps.warn(
        `${options.since === undefined ? 'No event to replay without --since' : `Replaying ${pending.length} event(s) after ${options.since}`}, then stopping (--once).`,
      );
    } else
      deps.warn(
        options.since === undefined
          ? `Waiting for new events${newest === undefined ? '' : ` (after those up to ${new Date(newest).toISOString()})`}. Stop with Ctrl-C.`
          : `Replaying ${pending.length} event(s) after ${options.since}, then waiting for new ones. Stop with Ctrl-C.`,
      );

    for (;;) {
      for (const event of pending.reverse()) {
        if (stop.aborted) return stopped(deps);
        if (seen.has(event.id)) continue;
        if (wanted(event) && !(await forward(event))) refused += 1;
        if (stop.aborted) return stopped(deps);
        see(event);
      }
      if (options.once) return refused === 0 ? 0 : 1;
      if (newest !== undefined) {
        for (const [id, createdAt] of seen) if (createdAt < newest - lookbackMs) seen.delete(id);
      }
      await deps.pause(options.intervalMs, stop);
      const polled = await persist(async () => {
        pending = (await feed.collect(newest === undefined ? undefined : newest - lookbackMs)).filter(
          (event) => !seen.has(event.id),
        );
      });
      if (!polled) return stopped(deps);
    }
  } catch (error) {
    if (!(error instanceof FatalFeedError)) throw error;
    deps.warn(`msv3-gateway listen: ${error.message}`);
    return 1;
  }
}

function stopped(deps: ListenDeps): number {
  deps.warn('msv3-gateway listen: stopped');
  return 0;
}

/** Whether `event` comes after `cursor` in the feed's order (created_at, then id). */
function isAfter(event: FeedEvent, cursor: FeedEvent): boolean {
  return event.createdAt > cursor.createdAt || (event.createdAt === cursor.createdAt && event.id > cursor.id);
}

function feedReader(options: ListenOptions, deps: ListenDeps, stop: AbortSignal) {
  const base = options.gatewayUrl.replace(/\/+$/, '');
  const pageSize = deps.pageSize ?? 100;
  // One type is filtered by the gateway; several, here (the feed takes one `type`).
  const type = options.events?.length === 1 ? options.events[0] : undefined;

  async function get(path: string): Promise<unknown> {
    let response: Response;
    try {
      response = await deps.fetch(`${base}${path}`, {
        headers: { 'x-api-key': options.apiKey, accept: 'application/json' },
        signal: AbortSignal.any([stop, AbortSignal.timeout(deps.feedTimeoutMs ?? FEED_TIMEOUT_MS)]),
      });
    } catch (error) {
      throw new PassingFeedError(describeFailure(error));
    }
    const text = await response.text().catch((error: unknown) => {
      throw new PassingFeedError(describeFailure(error));
    });
    if (response.ok) {
      try {
        return JSON.parse(text);
      } catch {
        throw new PassingFeedError(`GET ${path} answered ${response.status} with a body that is not JSON`);
      }
    }
    const problem = `GET ${path} answered ${response.status}${errorText(text)}`;
    if (response.status === 429 || response.status >= 500) {
      const waitMs = parseRetryAfter(response.headers.get('retry-after') ?? undefined, deps.now());
      throw new PassingFeedError(problem, waitMs);
    }
    throw new FatalFeedError(problem);
  }

  async function page(
    createdAfter: number | undefined,
    startingAfter: string | undefined,
    limit = pageSize,
  ): Promise<{ events: FeedEvent[]; hasMore: boolean }> {
    const query = new URLSearchParams({ limit: String(limit) });
    if (type !== undefined) query.set('type', type);
    if (options.wholesaler !== undefined) query.set('wholesaler', options.wholesaler);
    if (createdAfter !== undefined) query.set('created_after', new Date(createdAfter).toISOString());
    if (startingAfter !== undefined) query.set('starting_after', startingAfter);
    const answer = (await get(`/v1/events?${query}`)) as { events?: unknown; has_more?: unknown };
    if (!Array.isArray(answer.events) || typeof answer.has_more !== 'boolean') {
      throw new PassingFeedError('the feed answered something that is not an event list');
    }
    return { events: answer.events.map(feedEvent), hasMore: answer.has_more };
  }

  return {
    page,
    /** Every event created at or after `createdAfter` (all, if undefined), newest first. */
    async collect(createdAfter: number | undefined): Promise<FeedEvent[]> {
      const events: FeedEvent[] = [];
      const ids = new Set<string>();
      let startingAfter: string | undefined;
      for (;;) {
        const next = await page(createdAfter, startingAfter);
        for (const event of next.events) {
          if (ids.has(event.id)) continue;
          ids.add(event.id);
          events.push(event);
        }
        const last = next.events.at(-1);
        if (!next.hasMore || last === undefined) return events;
        startingAfter = last.id;
      }
    },
    /** The event `id` (for --since); a 404 says it is not this key's event. */
    async one(id: string): Promise<FeedEvent> {
      try {
        return feedEvent(await get(`/v1/events/${encodeURIComponent(id)}`));
      } catch (error) {
        if (error instanceof FatalFeedError && / 404\b/.test(error.message)) {
          throw new FatalFeedError(
            `--since ${id}: no such event for this API key (another account's or mode's, or past the retention)`,
          );
        }
        throw error;
      }
    },
  };
}

function feedEvent(value: unknown): FeedEvent {
  const event = value as { id?: unknown; type?: unknown; created_at?: unknown };
  const createdAt = typeof event.created_at === 'string' ? Date.parse(event.created_at) : Number.NaN;
  if (typeof event.id !== 'string' || typeof event.type !== 'string' || Number.isNaN(createdAt)) {
    throw new PassingFeedError('the feed listed something that is not an event');
  }
  // The gateway stores each body as JSON.stringify wrote it, so writing the parsed event again gives the
  // very bytes its webhook deliveries carry.
  return { id: event.id, type: event.type, createdAt, body: JSON.stringify(value) };
}

function forwarder(options: ListenOptions & { forwardTo: string }, deps: ListenDeps, stop: AbortSignal) {
  const tries = deps.forwardTries ?? FORWARD_TRIES;
  const backoffMs = deps.forwardBackoffMs ?? FORWARD_BACKOFF_MS;
  const timeoutMs = deps.forwardTimeoutMs ?? FORWARD_TIMEOUT_MS;
  /**
   * POSTs `event` until the receiver answers 2xx, at most `tries` times; prints a line per try. False
   * when the receiver did not take it.
   */
  return async (event: FeedEvent): Promise<boolean> => {
    const deliveryId = newDeliveryId();
    for (let attempt = 1; attempt <= tries; attempt++) {
      const startedAt = deps.now();
      const headers = deliveryHeaders({
        eventId: event.id,
        eventType: event.type,
        deliveryId,
        attempt,
        body: event.body,
        secrets: [options.secret],
        timestampSeconds: Math.floor(startedAt / 1000),
        userAgent: options.userAgent,
      });
      let outcome: string;
      let ok = false;
      try {
        const response = await deps.fetch(options.forwardTo, {
          method: 'POST',
          headers,
          body: event.body,
          redirect: 'manual',
          signal: AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]),
        });
        await response.body?.cancel().catch(() => {});
        ok = response.status >= 200 && response.status < 300;
        outcome = `${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`;
      } catch (error) {
        if (stop.aborted) return false;
        outcome = describeFailure(error, timeoutMs);
      }
      const line = `${new Date(startedAt).toISOString()}  ${event.type}  ${event.id}  -> ${outcome} in ${deps.now() - startedAt} ms`;
      if (ok) {
        deps.print(attempt === 1 ? line : `${line} (try ${attempt} of ${tries})`);
        return true;
      }
      if (attempt === tries) {
        deps.print(
          `${line} (try ${attempt} of ${tries}; gave up on it, moving on: GET /v1/events/${event.id} has it)`,
        );
        return false;
      }
      const waitMs = backoffMs * 2 ** (attempt - 1);
      deps.print(`${line} (try ${attempt} of ${tries}; again in ${seconds(waitMs)})`);
      await deps.pause(waitMs, stop);
      if (stop.aborted) return false;
    }
    return false;
  };
}

/** A failed request in words: `connection refused (ECONNREFUSED)`, `timed out after 10 s`, … */
function describeFailure(error: unknown, timeoutMs?: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return timeoutMs === undefined ? 'no answer in time' : `no answer within ${seconds(timeoutMs)}`;
  }
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (code === 'ENOTFOUND') return 'host not found (ENOTFOUND)';
  if (code === 'ECONNRESET') return 'connection reset (ECONNRESET)';
  const message = typeof cause?.message === 'string' ? cause.message : (error as Error)?.message;
  return code === undefined ? String(message ?? error) : `${message ?? 'failed'} (${code})`;
}

/** `: <the error's message>` from a gateway error body, if it has one. */
function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.message === 'string') {
      return ` ${typeof body.error === 'string' ? body.error : ''}: ${body.message}`.replace(/^ :/, ':');
    }
  } catch {
    // Not a gateway error body.
  }
  return '';
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;
}

function stamp(deps: ListenDeps): string {
  return new Date(deps.now()).toISOString();
}
