import { describe, expect, it } from 'vitest';
import type { EventType } from '../../core/event-types.js';
import { deliveryHeaders } from '../sign.js';
import { generateSigningSecret } from '../subscriptions/secrets.js';
import { verifyWebhook } from '../verify.js';
import { followEvents, type ListenDeps, type ListenOptions } from './listen.js';

/**
 * The follow/forward loop of `msv3-gateway listen` against a fake events feed and a fake receiver, with
 * a clock that moves only when the loop pauses.
 */

const GATEWAY = 'http://gateway.test';
const RECEIVER = 'http://127.0.0.1:3000/hooks';
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

interface StoredEvent {
  id: string;
  type: string;
  createdAt: number;
  wholesaler: string;
  body: string;
}

interface Received {
  headers: Record<string, string>;
  body: string;
}

type Answer = Response | Error;

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

function refused(): Error {
  return Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), { code: 'ECONNREFUSED' }),
  });
}

/** A feed with the gateway's order and filters, a receiver, and a clock driven by the loop's pauses. */
function setup(options: Partial<ListenOptions> = {}, deps: Partial<ListenDeps> = {}) {
  let now = T0;
  let serial = 0;
  const events: StoredEvent[] = [];
  const feedRequests: URL[] = [];
  /** Answers the next feed requests get instead of the feed. */
  const feedFailures: Answer[] = [];
  const received: Received[] = [];
  /** What the receiver answers (the next scripted answer, else 200). */
  const receiverAnswers: Answer[] = [];
  const pauses: number[] = [];
  const printed: string[] = [];
  const warned: string[] = [];
  const controller = new AbortController();
  /** Called after each pause with its number (1, 2, …); stops the loop after `stopAfter` pauses. */
  let onPause: (count: number) => void = () => {};
  let stopAfter = 10;

  const add = (type: string, createdAt: number, extra: { wholesaler?: string; id?: string } = {}) => {
    serial += 1;
    const id = extra.id ?? `evt_${String(serial).padStart(4, '0')}`;
    const body = JSON.stringify({
      id,
      type,
      created_at: new Date(createdAt).toISOString(),
      livemode: false,
      wholesaler: extra.wholesaler ?? 'phoenix',
      customer_id: 'apotheke1',
      data: { serial, note: 'Grüße – "quoted" \u2028' },
    });
    events.push({ id, type, createdAt, wholesaler: extra.wholesaler ?? 'phoenix', body });
    return id;
  };

  const ordered = () =>
    [...events].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));

  const feed = (url: URL): Response => {
    if (url.pathname.startsWith('/v1/events/')) {
      const event = events.find((e) => e.id === decodeURIComponent(url.pathname.slice('/v1/events/'.length)));
      return event === undefined
        ? jsonResponse(404, { error: 'resource_not_found', message: 'No event.' })
        : new Response(event.body, { status: 200 });
    }
    const q = url.searchParams;
    let list = ordered();
    if (q.has('type')) list = list.filter((e) => e.type === q.get('type'));
    if (q.has('wholesaler')) list = list.filter((e) => e.wholesaler === q.get('wholesaler'));
    if (q.has('created_after')) {
      const after = Date.parse(q.get('created_after')!);
      list = list.filter((e) => e.createdAt >= after);
    }
    const cursor = q.get('starting_after');
    if (cursor !== null) {
      const at = list.findIndex((e) => e.id === cursor);
      list = at === -1 ? [] : list.slice(at + 1);
    }
    const limit = Number(q.get('limit') ?? 20);
    const body = `{"events":[${list
      .slice(0, limit)
      .map((e) => e.body)
      .join(',')}],"has_more":${list.length > limit}}`;
    return new Response(body, { status: 200 });
  };

  const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    if (url.origin === GATEWAY) {
      feedRequests.push(url);
      expect(new Headers(init?.headers).get('x-api-key')).toBe('pk_test_listen');
      const failure = feedFailures.shift();
      if (failure instanceof Error) throw failure;
      return failure ?? feed(url);
    }
    expect(url.href).toBe(RECEIVER);
    expect(init?.method).toBe('POST');
    received.push({ headers: { ...(init?.headers as Record<string, string>) }, body: String(init?.body) });
    const answer = receiverAnswers.shift();
    if (answer instanceof Error) throw answer;
    return answer ?? new Response('ok', { status: 200, statusText: 'OK' });
  }) as typeof fetch;

  const secret = generateSigningSecret();
  const listenOptions: ListenOptions = {
    gatewayUrl: GATEWAY,
    apiKey: 'pk_test_listen',
    forwardTo: RECEIVER,
    secret,
    intervalMs: 1000,
    userAgent: 'msv3-gateway-webhooks/test',
    ...options,
  };
  const listenDeps: ListenDeps = {
    fetch: fakeFetch,
    now: () => now,
    pause: async (ms) => {
      pauses.push(ms);
      now += ms;
      onPause(pauses.length);
      if (pauses.length >= stopAfter) controller.abort();
    },
    print: (line) => printed.push(line),
    warn: (line) => warned.push(line),
    pageSize: 2,
    ...deps,
  };
  return {
    add,
    events,
    feedRequests,
    feedFailures,
    received,
    receiverAnswers,
    pauses,
    printed,
    warned,
    secret,
    tick: (ms: number) => {
      now += ms;
    },
    now: () => now,
    whenPausing(hook: (count: number) => void, stopAfterPauses: number) {
      onPause = hook;
      stopAfter = stopAfterPauses;
    },
    run: () => followEvents(listenOptions, listenDeps, controller.signal),
  };
}

const idsOf = (received: Received[]) => received.map((r) => r.headers['webhook-id']);

describe('msv3-gateway listen: following the feed', () => {
  it('forwards only the events created after the start, oldest first, reading every page', async () => {
    const s = setup();
    s.add('order.status_changed', T0 - 5_000);
    s.add('delivery.received', T0 - 1_000);
    const fresh: string[] = [];
    s.whenPausing((count) => {
      if (count === 1) {
        fresh.push(s.add('order.status_changed', s.now() - 300));
        fresh.push(s.add('delivery.received', s.now() - 200));
        fresh.push(s.add('delivery.shortage', s.now() - 200));
        fresh.push(s.add('order.status_changed', s.now() - 100));
        fresh.push(s.add('wholesaler.status_changed', s.now() - 50));
      }
    }, 3);
    expect(await s.run()).toBe(0);

    expect(idsOf(s.received)).toEqual(fresh);
    // More than one page per poll: the fresh five arrived with pages of two.
    expect(s.feedRequests.filter((url) => url.searchParams.has('starting_after')).length).toBeGreaterThan(1);
    expect(s.warned.at(-1)).toBe('msv3-gateway listen: stopped');
  });

  it('sends each event with the headers and body of a webhook delivery, signed with the secret', async () => {
    const s = setup();
    let id = '';
    s.whenPausing((count) => {
      if (count === 1) id = s.add('order.status_changed', s.now() - 10);
    }, 2);
    await s.run();

    expect(s.received).toHaveLength(1);
    const [arrival] = s.received;
    const stored = s.events.find((e) => e.id === id)!;
    expect(arrival!.body).toBe(stored.body);
    const headers = arrival!.headers;
    expect(headers).toEqual(
      deliveryHeaders({
        eventId: id,
        eventType: 'order.status_changed',
        deliveryId: headers['x-msv3-delivery-id']!,
        attempt: 1,
        body: stored.body,
        secrets: [s.secret],
        timestampSeconds: Number(headers['webhook-timestamp']),
        userAgent: 'msv3-gateway-webhooks/test',
      }),
    );
    expect(headers['x-msv3-delivery-id']).toMatch(/^whd_/);
    expect(verifyWebhook(arrival!.body, headers, s.secret, { scheme: 'both', now: s.now }).id).toBe(id);
    expect(s.printed).toHaveLength(1);
    expect(s.printed[0]).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  order\\.status_changed  ${id}  -> 200 OK in \\d+ ms$`),
    );
  });

  it('forwards, once, an event written late with a time older than one already forwarded', async () => {
    const s = setup();
    const order: string[] = [];
    s.whenPausing((count) => {
      if (count === 1) order.push(s.add('order.status_changed', s.now() - 10, { id: 'evt_M' }));
      // Committed late: older than evt_M, and one of the same millisecond with a smaller id.
      if (count === 2) {
        order.push(s.add('delivery.received', s.now() - 1_500, { id: 'evt_Z' }));
        order.push(s.add('delivery.received', s.now() - 1_010, { id: 'evt_A' }));
      }
    }, 5);
    await s.run();

    expect(idsOf(s.received)).toEqual(['evt_M', 'evt_Z', 'evt_A']);
  });

  it('replays the events after --since, oldest first, then forwards new ones', async () => {
    const s = setup({ since: 'evt_0002' });
    s.add('order.status_changed', T0 - 60_000);
    s.add('order.status_changed', T0 - 50_000);
    s.add('delivery.received', T0 - 50_000);
    s.add('delivery.received', T0 - 1_000);
    s.whenPausing((count) => {
      if (count === 1) s.add('order.status_changed', s.now() - 1);
    }, 2);
    expect(await s.run()).toBe(0);

    expect(idsOf(s.received)).toEqual(['evt_0003', 'evt_0004', 'evt_0005']);
    expect(s.warned).toContain(
      'Replaying 2 event(s) after evt_0002, then waiting for new ones. Stop with Ctrl-C.',
    );
  });

  it('with --once, replays the events after --since and stops: 0 when the receiver took them all', async () => {
    const s = setup({ since: 'evt_0001', once: true });
    s.add('order.status_changed', T0 - 60_000);
    s.add('delivery.received', T0 - 50_000);
    s.add('delivery.shortage', T0 - 1_000);
    expect(await s.run()).toBe(0);
    expect(idsOf(s.received)).toEqual(['evt_0002', 'evt_0003']);
    expect(s.pauses).toEqual([]);
    expect(s.warned).toEqual(['Replaying 2 event(s) after evt_0001, then stopping (--once).']);
  });

  it('with --once, ends with exit code 1 when the receiver refused an event', async () => {
    const s = setup({ since: 'evt_0001', once: true });
    s.add('order.status_changed', T0 - 60_000);
    s.add('delivery.received', T0 - 50_000);
    s.add('delivery.shortage', T0 - 1_000);
    s.receiverAnswers.push(refused(), refused(), refused());
    expect(await s.run()).toBe(1);
    expect(idsOf(s.received)).toEqual(['evt_0002', 'evt_0002', 'evt_0002', 'evt_0003']);
  });

  it('without a receiver (--print), writes each event body on one line, exactly as the feed has it', async () => {
    const s = setup({ since: 'evt_0001', once: true, forwardTo: undefined });
    s.add('order.status_changed', T0 - 60_000);
    s.add('delivery.received', T0 - 50_000);
    expect(await s.run()).toBe(0);
    expect(s.received).toEqual([]);
    expect(s.printed).toEqual([s.events[1]!.body]);
    expect(JSON.parse(s.printed[0]!)).toMatchObject({ id: 'evt_0002', type: 'delivery.received' });
  });

  it('ends with exit code 1 when --since names no event of the key', async () => {
    const s = setup({ since: 'evt_unknown' });
    s.add('order.status_changed', T0 - 1_000);
    expect(await s.run()).toBe(1);
    expect(s.received).toEqual([]);
    expect(s.warned.at(-1)).toMatch(/^msv3-gateway listen: --since evt_unknown: no such event/);
  });

  it('forwards only the chosen event types and wholesaler, asking the feed to filter what it can', async () => {
    const several = setup({ events: ['order.status_changed', 'delivery.shortage'], wholesaler: 'phoenix' });
    several.whenPausing((count) => {
      if (count === 1) {
        several.add('order.status_changed', several.now() - 5);
        several.add('delivery.received', several.now() - 4);
        several.add('delivery.shortage', several.now() - 3);
        several.add('order.status_changed', several.now() - 2, { wholesaler: 'sanacorp' });
      }
    }, 2);
    await several.run();
    expect(idsOf(several.received)).toEqual(['evt_0001', 'evt_0003']);
    expect(several.feedRequests.every((url) => url.searchParams.get('wholesaler') === 'phoenix')).toBe(true);
    expect(several.feedRequests.some((url) => url.searchParams.has('type'))).toBe(false);

    const one = setup({ events: ['delivery.received' as EventType] });
    one.whenPausing((count) => {
      if (count === 1) {
        one.add('order.status_changed', one.now() - 5);
        one.add('delivery.received', one.now() - 4);
      }
    }, 2);
    await one.run();
    expect(idsOf(one.received)).toEqual(['evt_0002']);
    expect(one.feedRequests.every((url) => url.searchParams.get('type') === 'delivery.received')).toBe(true);
  });

  it('waits as long as Retry-After says on 429, backs off on 5xx and network errors, and carries on', async () => {
    const s = setup({}, { maxFeedBackoffMs: 3_000 });
    s.whenPausing((count) => {
      if (count === 1) {
        s.add('order.status_changed', s.now() - 5);
        s.feedFailures.push(
          jsonResponse(429, { error: 'rate_limited', message: 'Slow down.' }, { 'retry-after': '7' }),
          jsonResponse(503, { error: 'unavailable', message: 'Database down.' }),
          new TypeError('fetch failed'),
          jsonResponse(502, {}),
        );
      }
    }, 7);
    expect(await s.run()).toBe(0);

    // The interval, 7 s (Retry-After), then doubling from the interval up to the cap, then the interval.
    expect(s.pauses.slice(0, 6)).toEqual([1_000, 7_000, 2_000, 3_000, 3_000, 1_000]);
    expect(s.warned.filter((line) => line.includes('events feed:'))).toEqual([
      expect.stringMatching(/429 rate_limited: Slow down\.; asking again in 7 s$/),
      expect.stringMatching(/503 unavailable: Database down\.; asking again in 2 s$/),
      expect.stringMatching(/fetch failed; asking again in 3 s$/),
      expect.stringMatching(/502; asking again in 3 s$/),
    ]);
    expect(idsOf(s.received)).toEqual(['evt_0001']);
  });

  it('keeps trying the start until the feed answers', async () => {
    const s = setup();
    s.add('order.status_changed', T0 - 1_000);
    s.feedFailures.push(refused(), jsonResponse(500, {}));
    s.whenPausing((count) => {
      if (count === 3) s.add('delivery.received', s.now() - 1);
    }, 4);
    await s.run();
    expect(idsOf(s.received)).toEqual(['evt_0002']);
    expect(s.warned[0]).toMatch(/events feed: connection refused \(ECONNREFUSED\); asking again in 1 s$/);
  });

  it('tries a failing receiver three times, then moves on saying so; no event is skipped silently', async () => {
    const s = setup();
    s.whenPausing((count) => {
      if (count === 1) {
        s.add('order.status_changed', s.now() - 3);
        s.add('delivery.received', s.now() - 2);
        s.add('delivery.shortage', s.now() - 1);
        s.receiverAnswers.push(
          new Response('no', { status: 500, statusText: 'Internal Server Error' }),
          new Response('no', { status: 500, statusText: 'Internal Server Error' }),
          new Response(null, { status: 204 }),
          refused(),
          refused(),
          refused(),
        );
      }
    }, 6);
    expect(await s.run()).toBe(0);

    expect(idsOf(s.received)).toEqual([
      'evt_0001',
      'evt_0001',
      'evt_0001',
      'evt_0002',
      'evt_0002',
      'evt_0002',
      'evt_0003',
    ]);
    expect(s.received.slice(0, 3).map((r) => r.headers['x-msv3-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(s.received.slice(0, 3).map((r) => r.headers['x-msv3-delivery-id'])).size).toBe(1);
    expect(s.pauses.slice(1, 5)).toEqual([500, 1_000, 500, 1_000]);
    const lines = s.printed.map((line) => line.replace(/^\S+ {2}/, '').replace(/in \d+ ms/, 'in N ms'));
    expect(lines).toEqual([
      'order.status_changed  evt_0001  -> 500 Internal Server Error in N ms (try 1 of 3; again in 0.5 s)',
      'order.status_changed  evt_0001  -> 500 Internal Server Error in N ms (try 2 of 3; again in 1 s)',
      'order.status_changed  evt_0001  -> 204 in N ms (try 3 of 3)',
      'delivery.received  evt_0002  -> connection refused (ECONNREFUSED) in N ms (try 1 of 3; again in 0.5 s)',
      'delivery.received  evt_0002  -> connection refused (ECONNREFUSED) in N ms (try 2 of 3; again in 1 s)',
      'delivery.received  evt_0002  -> connection refused (ECONNREFUSED) in N ms (try 3 of 3; gave up on it, moving on: GET /v1/events/evt_0002 has it)',
      'delivery.shortage  evt_0003  -> 200 OK in N ms',
    ]);
  });

  it('with --once, gives up after three failed tries in a row when the gateway does not answer, naming --url', async () => {
    const s = setup({ once: true, since: 'evt_0001' });
    s.feedFailures.push(refused(), refused(), refused(), refused());
    s.whenPausing(() => {}, 100);
    expect(await s.run()).toBe(1);
    expect(s.feedRequests).toHaveLength(3);
    expect(s.pauses).toEqual([1_000, 2_000]);
    expect(s.warned.at(-1)).toBe(
      'msv3-gateway listen: events feed: connection refused (ECONNREFUSED); gave up after 3 tries (--once). Is the gateway at http://gateway.test? Give its URL with --url (or MSV3_GATEWAY_URL).',
    );
  });

  it('with --once, still gets over a failure or two', async () => {
    const s = setup({ once: true, since: 'evt_0001' });
    s.add('order.status_changed', T0 - 2_000);
    s.add('delivery.received', T0 - 1_000);
    s.feedFailures.push(refused(), jsonResponse(503, {}));
    expect(await s.run()).toBe(0);
    expect(idsOf(s.received)).toEqual(['evt_0002']);
  });

  it('ends with exit code 1 when the gateway refuses the key', async () => {
    const s = setup();
    s.feedFailures.push(jsonResponse(401, { error: 'invalid_api_key', message: 'Unknown API key.' }));
    expect(await s.run()).toBe(1);
    expect(s.warned.at(-1)).toBe(
      'msv3-gateway listen: GET /v1/events?limit=1 answered 401 invalid_api_key: Unknown API key.',
    );
  });
});
