import { randomUUID } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { ApiError } from '../../core/errors.js';
import { manualClock } from '../../lib/clock.js';
import type { Msv3Client } from '../../msv3/client.js';
import { createCredentials } from '../../msv3/credentials.js';
import type { OrderRequest, OrderResponse, SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import type {
  OrderStatusRequest,
  OrderStatusResponse,
} from '../../msv3/operations/bestellstatus-abfragen.js';
import type { Msv3Operation } from '../../msv3/operations/operation.js';
import type { CallResult } from '../../msv3/transport.js';
import { type UpstreamError, upstreamError } from '../../msv3/upstream-error.js';
import { createLogger } from '../../observability/logger.js';
import { createAccount } from '../../store/accounts.js';
import { findOrderById } from '../../store/orders.js';
import { eventRecorder } from '../../webhooks/events/record.js';
import type { ResolvedWholesaler, WholesalerRegistry } from '../../wholesalers/registry.js';
import { createContractCache } from './contract-check.js';
import { bestellungIdFor, gatewayOrderId } from './ids.js';
import { placeOrder } from './placement.js';
import type { OrderDeps } from './state.js';

/**
 * The placement state machine against a scripted wholesaler: every SOAP call is answered by the next
 * entry of `script` for its operation, so lost answers and failing status queries are exact.
 */

type Answer = CallResult<unknown>;
const ok = (value: unknown): Answer => ({ ok: true, value, latencyMs: 1, status: 200 });
const failed = (error: UpstreamError): Answer => ({ ok: false, error, latencyMs: 1 });
const timeout = failed(
  upstreamError({
    reason: 'timeout',
    target: 'phoenix',
    operation: 'bestellen',
    phase: 'headers',
    timeoutMs: 30_000,
    maybeDelivered: true,
  }),
);
const refused = failed(
  upstreamError({
    reason: 'unreachable',
    target: 'phoenix',
    operation: 'bestellen',
    code: 'ECONNREFUSED',
    detail: 'refused',
    maybeDelivered: false,
  }),
);

const WHOLESALER: ResolvedWholesaler = {
  id: 'phoenix',
  name: 'PHOENIX',
  version: 2,
  route: 'sandbox',
  endpoint: { target: 'sandbox/phoenix', baseUrl: 'http://127.0.0.1:9/msv3/v2.0', version: 2 },
  custom: null,
};

function confirmation(request: OrderRequest): SubOrderAnswer[] {
  const sub = request.subOrders[0]!;
  return [
    {
      ...sub,
      // Positions come back in reverse order: they must be matched by PZN, never by index.
      positions: [...sub.positions].reverse().map((p) => ({
        pzn: p.pzn,
        quantity: p.quantity,
        deliveryInstruction: p.deliveryInstruction,
        parts: [
          {
            quantity: p.quantity,
            type: 'Normal',
            deliveryTime: '2026-01-05T14:30:00+01:00',
            tour: 'Mittag',
            tourId: 'T1',
            defectReason: 'KeineAngabe',
            tourDeviation: false,
          },
        ],
      })),
    },
  ];
}

describeEachDialect('placeOrder against a scripted wholesaler', (getDatabase) => {
  const clock = manualClock();
  const credentials = createCredentials('apotheke1', 'secret');
  let script: Record<string, ((request: never) => Answer)[]>;
  let sent: { operation: string; request: unknown }[];
  let deps: OrderDeps;
  let accountId: string;

  beforeEach(async () => {
    script = {};
    sent = [];
    const client: Msv3Client = {
      async call<Req, Res>(
        operation: Msv3Operation<Req, Res>,
        _endpoint: unknown,
        _credentials: unknown,
        request: Req,
      ) {
        sent.push({ operation: operation.name, request });
        const next = script[operation.name]?.shift();
        if (next === undefined) throw new Error(`unexpected ${operation.name}`);
        return next(request as never) as CallResult<Res>;
      },
    };
    const registry: WholesalerRegistry = { list: async () => [], resolve: async () => WHOLESALER };
    deps = {
      upstream: { registry, client, customClient: client, clientSoftwareId: 'test-suite' },
      db: getDatabase().db,
      clock,
      recordEvent: eventRecorder({ clock }),
      log: createLogger({ level: 'silent' }),
      contracts: createContractCache({ clock, ttlMs: 0 }),
      maxPositions: 500,
    };
    accountId = (await createAccount(getDatabase().db, clock, { name: 'Apotheke' })).id;
  });

  const caller = () => ({ accountId, keyId: 'key_1', mode: 'test' as const });
  const items = [
    { pzn: '4114918', quantity: 3 },
    { pzn: '1234562', quantity: 2, delivery_preference: 'backorder' as const },
  ];
  const confirm = (request: OrderRequest) =>
    ok({
      id: request.id,
      supportId: request.supportId,
      nightMode: false,
      subOrders: confirmation(request),
    } satisfies OrderResponse);
  const status =
    (value: OrderStatusResponse['status'], answer?: (r: OrderStatusRequest) => SubOrderAnswer[]) =>
    (request: OrderStatusRequest) =>
      ok({
        id: request.orderId,
        status: value,
        supportId: null,
        subOrders: answer?.(request) ?? [],
      } satisfies OrderStatusResponse);
  const bestellenRequests = () =>
    sent.filter((s) => s.operation === 'bestellen').map((s) => s.request as OrderRequest);

  async function attempt(key: { key: string; firstUsedAt: number } | null) {
    return placeOrder(deps, caller(), credentials, { wholesaler: 'phoenix', items, idempotency: key });
  }

  it('maps the answer by PZN although the positions come back in another order', async () => {
    script.bestellen = [confirm];
    const result = await attempt(null);
    expect(result.items.map((i) => [i.pzn, i.quantity_confirmed, i.delivery_preference])).toEqual([
      ['04114918', 3, 'normal'],
      ['01234562', 2, 'backorder'],
    ]);
    expect(result.items[0]!.deliveries[0]).toMatchObject({
      tour_id: 'T1',
      estimated_at: '2026-01-05T14:30:00',
    });
  });

  it('answers 504 when neither answer nor status can be read, and the retry with the key reconciles without ordering again', async () => {
    const key = { key: randomUUID(), firstUsedAt: clock.now() };
    let placedAnswer: SubOrderAnswer[] = [];
    script.bestellen = [
      (request: OrderRequest) => {
        placedAnswer = confirmation(request);
        return timeout;
      },
    ];
    script.bestellstatusAbfragen = [() => timeout];
    const error = await attempt(key).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).kind).toBe('order_outcome_unknown');
    expect((error as ApiError).message).toMatch(/Retry with the same Idempotency-Key/);

    const bestellungId = bestellungIdFor({
      ...caller(),
      idempotencyKey: key.key,
      firstUsedAt: key.firstUsedAt,
    });
    expect((await findOrderById(deps.db, gatewayOrderId(bestellungId)))?.state).toBe('unknown');

    script.bestellstatusAbfragen = [status('BestellantwortVerfuegbar', () => placedAnswer)];
    const result = await attempt(key);
    expect(result).toMatchObject({
      status: 'confirmed',
      request_id: bestellungId,
      order_id: gatewayOrderId(bestellungId),
    });
    expect(bestellenRequests()).toHaveLength(1);
  });

  it('sends again with the same Id only after the wholesaler reports the Id unknown', async () => {
    const key = { key: randomUUID(), firstUsedAt: clock.now() };
    script.bestellen = [() => timeout, confirm];
    script.bestellstatusAbfragen = [status('KennungUnbekannt')];
    const result = await attempt(key);
    expect(result.status).toBe('confirmed');
    const [first, second] = bestellenRequests();
    expect(second).toEqual(first);
  });

  it('takes "answer not available" as placed: queued, never sent again', async () => {
    script.bestellen = [() => timeout];
    script.bestellstatusAbfragen = [status('BestellantwortNichtVerfuegbar')];
    const result = await attempt({ key: randomUUID(), firstUsedAt: clock.now() });
    expect(result).toMatchObject({
      status: 'queued_night_mode',
      items: [{ answered: false }, { answered: false }],
    });
    expect(bestellenRequests()).toHaveLength(1);
  });

  it('leaves a call that never reached the wholesaler not placed, and the retry sends the same request', async () => {
    const key = { key: randomUUID(), firstUsedAt: clock.now() };
    script.bestellen = [() => refused];
    const error = await attempt(key).catch((e: unknown) => e);
    expect((error as ApiError).kind).toBe('wholesaler_unreachable');
    expect(sent.map((s) => s.operation)).toEqual(['bestellen']);

    script.bestellen = [confirm];
    expect((await attempt(key)).status).toBe('confirmed');
    const [first, second] = bestellenRequests();
    expect(second).toEqual(first);
  });

  it('answers a settled order from the database on a retry, without any SOAP call', async () => {
    const key = { key: randomUUID(), firstUsedAt: clock.now() };
    script.bestellen = [confirm];
    const first = await attempt(key);
    const calls = sent.length;
    expect(await attempt(key)).toEqual(first);
    expect(sent).toHaveLength(calls);
  });

  it('places a new order for the same key once its record expired (a new first use)', async () => {
    script.bestellen = [confirm, confirm];
    const first = await attempt({ key: 'reused', firstUsedAt: 1 });
    const second = await attempt({ key: 'reused', firstUsedAt: 1 + 24 * 60 * 60 * 1000 });
    expect(second.order_id).not.toBe(first.order_id);
    expect(bestellenRequests()).toHaveLength(2);
  });
});
