import { setTimeout as sleep } from 'node:timers/promises';
import { SCENARIO_PZNS } from '../../src/mock/index.js';
import type { KeyOutcome } from './invariants.js';

/**
 * The mixed load of the cluster benchmark: clients that check availability, place orders with an
 * Idempotency-Key (retrying with the SAME key on 5xx, network errors and 504 order_outcome_unknown, as
 * docs/idempotency.md says), ask an order's status and list deliveries, all through the proxy.
 */

export const CREDENTIALS = { 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'bench-secret' };

export interface Answer {
  status: number;
  /** `ok`, `<status> <error field>`, or `network <code>`. */
  kind: string;
  json?: Record<string, unknown>;
  retryAfterS?: number;
  /** The process that answered (the proxy's `x-cluster-backend`). */
  backend?: number;
}

export interface Recorder {
  /** Count per operation and answer kind. */
  kinds: Map<string, number>;
  latencies: Map<string, number[]>;
  /** The body sent with each Idempotency-Key (a replay must send the same). */
  orderBodies: Map<string, unknown>;
}

export function newRecorder(): Recorder {
  return { kinds: new Map(), latencies: new Map(), orderBodies: new Map() };
}

export async function call(
  base: string,
  recorder: Recorder | undefined,
  operation: string,
  init: { method: string; path: string; apiKey: string; body?: unknown; idempotencyKey?: string },
): Promise<Answer> {
  const started = performance.now();
  let answer: Answer;
  try {
    const response = await fetch(`${base}${init.path}`, {
      method: init.method,
      headers: {
        'x-api-key': init.apiKey,
        ...CREDENTIALS,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.idempotencyKey === undefined ? {} : { 'idempotency-key': init.idempotencyKey }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = undefined;
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    const backend = response.headers.get('x-cluster-backend');
    answer = {
      status: response.status,
      kind: response.ok ? 'ok' : `${response.status} ${String(json?.error ?? 'no_error_field')}`,
      ...(json === undefined ? {} : { json }),
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterS: retryAfter } : {}),
      ...(backend === null ? {} : { backend: Number(backend) }),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    answer = { status: 0, kind: `network ${cause?.code ?? (error as Error).name}` };
  }
  if (recorder !== undefined) {
    const key = `${operation}\t${answer.kind}`;
    recorder.kinds.set(key, (recorder.kinds.get(key) ?? 0) + 1);
    const list = recorder.latencies.get(operation) ?? [];
    list.push(performance.now() - started);
    recorder.latencies.set(operation, list);
  }
  return answer;
}

/** Three sub-orders of three types in one Bestellung (docs/orders.md). */
const subOrders = (first: { pzn: string; quantity: number }[]) => ({
  wholesaler: 'phoenix',
  sub_orders: [
    { items: first },
    { order_type: 'batch', order_label: 'LAGER', items: [{ pzn: '04114918', quantity: 2 }] },
    { order_type: 'special', items: [{ pzn: '01234562', quantity: 1 }] },
  ],
});
const ORDER = subOrders([{ pzn: '04114918', quantity: 1 }]);
/** With the mock's slow-answer scenario PZN: the order stays in flight for seconds (a crash target). */
export const SLOW_ORDER = subOrders([
  { pzn: '04114918', quantity: 1 },
  { pzn: SCENARIO_PZNS.SLOW_ANSWER.pzn, quantity: 1 },
]);

/**
 * One order with one key, retried until a final answer or `giveUpMs`. `firstBase` sends the first
 * attempt elsewhere (straight to the gateway process about to be killed).
 */
export async function placeOrder(
  base: string,
  recorder: Recorder,
  apiKey: string,
  key: string,
  giveUpMs: number,
  options: { body?: unknown; firstBase?: string } = {},
): Promise<KeyOutcome> {
  const deadline = Date.now() + giveUpMs;
  const ids = new Set<string>();
  recorder.orderBodies.set(key, options.body ?? ORDER);
  for (let attempt = 0; ; attempt++) {
    const answer = await call(attempt === 0 ? (options.firstBase ?? base) : base, recorder, 'order', {
      method: 'POST',
      path: '/v1/orders',
      apiKey,
      body: options.body ?? ORDER,
      idempotencyKey: key,
    });
    if (answer.status === 200 && typeof answer.json?.order_id === 'string') {
      ids.add(answer.json.order_id);
      return { key, acknowledgedOrderIds: [...ids], unresolved: false };
    }
    const retryable = answer.status === 0 || answer.status >= 500 || [409, 429].includes(answer.status);
    if (!retryable) return { key, acknowledgedOrderIds: [], unresolved: false };
    if (Date.now() > deadline) return { key, acknowledgedOrderIds: [], unresolved: true };
    await sleep(Math.min((answer.retryAfterS ?? 0.5) * 1000, 5_000));
  }
}

export interface ClientResult {
  outcomes: KeyOutcome[];
}

/** One client until `endAt`; an order under way is finished (up to `giveUpMs`). */
export async function runClient(
  base: string,
  recorder: Recorder,
  apiKey: string,
  clientId: number,
  /** Read before every operation: the run may extend the load (until a restarted process served). */
  endAt: () => number,
  giveUpMs: number,
): Promise<ClientResult> {
  const outcomes: KeyOutcome[] = [];
  const acknowledged: string[] = [];
  let n = 0;
  while (Date.now() < endAt()) {
    const pick = Math.random();
    if (pick < 0.4) {
      await call(base, recorder, 'availability', {
        method: 'POST',
        path: '/v1/availability',
        apiKey,
        body: { wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 2 }] },
      });
    } else if (pick < 0.65) {
      const body = Math.random() < 0.25 ? SLOW_ORDER : ORDER;
      const key = `bench-${clientId}-${n++}`;
      const outcome = await placeOrder(base, recorder, apiKey, key, giveUpMs, { body });
      outcomes.push(outcome);
      acknowledged.push(...outcome.acknowledgedOrderIds);
    } else if (pick < 0.8 && acknowledged.length > 0) {
      const id = acknowledged[Math.floor(Math.random() * acknowledged.length)]!;
      await call(base, recorder, 'order_status', {
        method: 'GET',
        path: `/v1/orders/${id}/status?wholesaler=phoenix`,
        apiKey,
      });
    } else {
      await call(base, recorder, 'deliveries', {
        method: 'GET',
        path: '/v1/deliveries?wholesaler=phoenix',
        apiKey,
      });
    }
  }
  return { outcomes };
}

/** Sends every acknowledged key once more: a replay must name the same order (else: two orders). */
export async function replayKeys(
  base: string,
  recorder: Recorder,
  keyOf: (outcome: KeyOutcome) => string,
  outcomes: KeyOutcome[],
  concurrency: number,
): Promise<void> {
  const queue = outcomes.filter((o) => o.acknowledgedOrderIds.length > 0);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let outcome = queue.pop(); outcome !== undefined; outcome = queue.pop()) {
        const answer = await call(base, recorder, 'order_replay', {
          method: 'POST',
          path: '/v1/orders',
          apiKey: keyOf(outcome),
          body: recorder.orderBodies.get(outcome.key) ?? ORDER,
          idempotencyKey: outcome.key,
        });
        const id = answer.json?.order_id;
        if (answer.status === 200 && typeof id === 'string' && !outcome.acknowledgedOrderIds.includes(id))
          outcome.acknowledgedOrderIds.push(id);
      }
    }),
  );
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
