import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorKindOf } from './error-shape.js';
import { call } from './http.js';

/**
 * A pharmacy's order client as docs/idempotency.md recommends it: one Idempotency-Key per order, and on a 5xx,
 * a 409 in progress, a timeout or a broken connection the same request again with the same key (here
 * alternating between the gateways it knows) until a final answer or its deadline.
 */

interface OrderAttempt {
  status: number | string;
  kind?: string;
  retryAfter?: string;
  /** When the answer (or the failure) came, performance.now(). */
  at: number;
}

export interface OrderRecord {
  key: string;
  /** MSV3 user name, unique per order, so the wholesaler's orders can be counted per client order. */
  username: string;
  attempts: OrderAttempt[];
  /** 200 with a confirmed order. */
  acknowledged: boolean;
  orderId?: string;
  /** The last answer was final (2xx or a 4xx other than 409). */
  settled: boolean;
}

export interface OrderOptions {
  gateways: () => readonly string[];
  apiKey: string;
  wholesaler: string;
  /** The order beside `wholesaler`: `items`, or `sub_orders` (docs/orders.md). */
  order: { items: unknown[] } | { sub_orders: unknown[] };
  /** Give up retrying after this moment (performance.now()). */
  deadline: number;
  /** Give up at once when this says so (e.g. every gateway process has exited). */
  abandon?: () => boolean;
  timeoutMs?: number;
  username?: string;
  key?: string;
}

function isFinal(attempt: OrderAttempt): boolean {
  return typeof attempt.status === 'number' && attempt.status < 500 && attempt.status !== 409;
}

export async function placeOrderWithRetries(options: OrderOptions): Promise<OrderRecord> {
  const record: OrderRecord = {
    key: options.key ?? randomUUID(),
    username: options.username ?? `bat${randomUUID().replaceAll('-', '').slice(0, 16)}`,
    attempts: [],
    acknowledged: false,
    settled: false,
  };
  // At least one attempt, however close the deadline.
  for (let attempt = 0; attempt === 0 || performance.now() < options.deadline; attempt++) {
    const gateways = options.gateways();
    const url = gateways[attempt % gateways.length]!;
    const outcome = await call(`${url}/v1/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': options.apiKey,
        'x-msv3-username': record.username,
        'x-msv3-password': 'battery-secret',
        'idempotency-key': record.key,
      },
      body: JSON.stringify({ wholesaler: options.wholesaler, ...options.order }),
      timeoutMs: options.timeoutMs ?? 15_000,
    });
    const at = performance.now();
    const seen: OrderAttempt = outcome.ok
      ? {
          status: outcome.status,
          ...optional('kind', errorKindOf(outcome.body)),
          ...optional('retryAfter', outcome.headers['retry-after']),
          at,
        }
      : { status: outcome.failure, at };
    record.attempts.push(seen);
    if (outcome.ok && outcome.status === 200) {
      const body = JSON.parse(outcome.body) as { status?: string; order_id?: string };
      record.acknowledged = body.status === 'confirmed' || body.status === 'queued_night_mode';
      if (body.order_id !== undefined) record.orderId = body.order_id;
    }
    if (isFinal(seen)) {
      record.settled = true;
      return record;
    }
    if (options.abandon?.()) return record;
    await sleep(Math.min(2_000, 200 * 2 ** Math.min(attempt, 3)));
  }
  return record;
}

function optional<K extends string>(name: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, string>);
}
