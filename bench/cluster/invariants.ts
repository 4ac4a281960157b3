/**
 * The invariants of the cluster benchmark (docs/scale-out.md), as pure checks over what the benchmark
 * recorded, so `npm test` covers them (invariants.test.ts) without starting processes.
 */

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** What one client saw for one Idempotency-Key, over all its attempts. */
export interface KeyOutcome {
  key: string;
  /** Distinct `order_id`s of the 200 answers for this key (more than one: two gateway orders). */
  acknowledgedOrderIds: string[];
  /** No final answer (200 or a 4xx other than 409/429) before the client gave up. */
  unresolved: boolean;
}

export interface OrderFacts {
  keys: KeyOutcome[];
  /** The gateway order ids of the orders the wholesaler holds (one per distinct Bestellung Id). */
  wholesalerOrderIds: string[];
  /** `bestellen` requests that reached the wholesaler, counted by its mock (resends included). */
  bestellenCalls: number;
}

/**
 * 0 doubled: no key answered with two gateway orders, and the wholesaler holds no order beyond one per
 * key (orders no client saw acknowledged are allowed only for keys whose outcome stayed unknown).
 * 0 lost: every acknowledged order exists at the wholesaler.
 */
export function checkOrders(facts: OrderFacts): Check[] {
  const doubledKeys = facts.keys.filter((k) => new Set(k.acknowledgedOrderIds).size > 1);
  const acknowledged = new Set(facts.keys.flatMap((k) => k.acknowledgedOrderIds));
  const atWholesaler = new Set(facts.wholesalerOrderIds);
  const repeatedAtWholesaler = facts.wholesalerOrderIds.length - atWholesaler.size;
  const unacknowledged = [...atWholesaler].filter((id) => !acknowledged.has(id));
  const unresolved = facts.keys.filter((k) => k.unresolved && k.acknowledgedOrderIds.length === 0).length;
  const lost = [...acknowledged].filter((id) => !atWholesaler.has(id));
  return [
    {
      name: 'orders: no key answered with two gateway orders',
      ok: doubledKeys.length === 0,
      detail: `${doubledKeys.length} of ${facts.keys.length} keys${doubledKeys.length ? `: ${doubledKeys.map((k) => k.key).join(', ')}` : ''}`,
    },
    {
      name: 'orders: 0 doubled at the wholesaler',
      ok:
        repeatedAtWholesaler === 0 &&
        atWholesaler.size <= facts.keys.length &&
        unacknowledged.length <= unresolved,
      detail: `${atWholesaler.size} orders for ${facts.keys.length} keys; ${unacknowledged.length} not acknowledged (allowed: ${unresolved} keys left unresolved); ${facts.bestellenCalls} bestellen calls`,
    },
    {
      name: 'orders: 0 lost (every acknowledged order is at the wholesaler)',
      ok: lost.length === 0,
      detail: `${acknowledged.size} acknowledged, ${lost.length} missing${lost.length ? `: ${lost.slice(0, 5).join(', ')}` : ''}`,
    },
  ];
}

export interface WebhookFacts {
  /** Event ids the gateways owe the receiver (one delivery row each for the subscription). */
  sentEventIds: string[];
  /** `webhook-id` of every arrival at the receiver, in arrival order, repeats included. */
  receivedIds: string[];
}

export interface WebhookSummary {
  sent: number;
  received: number;
  distinctReceived: number;
  duplicates: number;
}

export function summariseWebhooks(facts: WebhookFacts): WebhookSummary {
  const distinct = new Set(facts.receivedIds);
  return {
    sent: new Set(facts.sentEventIds).size,
    received: facts.receivedIds.length,
    distinctReceived: distinct.size,
    duplicates: facts.receivedIds.length - distinct.size,
  };
}

/** 0 lost; nothing received that was not sent. Duplicates are counted, not failed (at-least-once). */
export function checkWebhooks(facts: WebhookFacts): Check[] {
  const received = new Set(facts.receivedIds);
  const sent = new Set(facts.sentEventIds);
  const lost = [...sent].filter((id) => !received.has(id));
  const unknown = [...received].filter((id) => !sent.has(id));
  const summary = summariseWebhooks(facts);
  return [
    {
      name: 'webhooks: 0 lost',
      ok: lost.length === 0,
      detail: `${sent.size} sent, ${summary.distinctReceived} received (${summary.duplicates} duplicate arrivals), ${lost.length} missing`,
    },
    {
      name: 'webhooks: no event received that was not recorded',
      ok: unknown.length === 0,
      detail: `${unknown.length} unknown ids`,
    },
  ];
}

export interface RateLimitFacts {
  points: number;
  windowSeconds: number;
  /** From the first to the last request of the phase. */
  durationMs: number;
  allowed: number;
  limited: number;
  /** Answers that were neither 2xx nor 429 (network errors included). */
  other: number;
  /** Extra allowed requests accepted on top of the bound (stated in docs/scale-out.md). */
  tolerance: number;
}

/**
 * Fixed windows (rate-limiter-flexible) start at a key's first request and are not aligned with the
 * phase, so a phase of D seconds touches at most ceil(D / window) + 1 windows: allowed ≤ points × that
 * (+ tolerance). Per-process counting would allow about three times as much.
 */
export function rateLimitBound(facts: RateLimitFacts): number {
  const windows = Math.ceil(facts.durationMs / 1000 / facts.windowSeconds) + 1;
  return facts.points * windows + facts.tolerance;
}

export function checkRateLimit(facts: RateLimitFacts): Check[] {
  const bound = rateLimitBound(facts);
  return [
    {
      name: 'rate limit: allowed requests within the shared budget',
      ok: facts.allowed <= bound && facts.limited > 0,
      detail: `${facts.allowed} allowed (bound ${bound} = ${facts.points}/${facts.windowSeconds}s over ${(facts.durationMs / 1000).toFixed(1)} s + ${facts.tolerance}), ${facts.limited} answered 429`,
    },
    {
      name: 'rate limit: every other answer is 429',
      ok: facts.other === 0,
      detail: `${facts.other} other answers`,
    },
  ];
}
